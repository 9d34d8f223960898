// How many graph memories a recall scope holds; decides exact scan versus the ANN index.
MATCH (m:Memory {tenant: $tenant})
WHERE ($sessionId IS NULL OR m.sessionId = $sessionId)
  AND ($userId IS NULL OR m.userId = $userId)
  AND m.tier IN $tiers
RETURN count(m) AS n
