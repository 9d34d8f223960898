// How many graph memories a session holds, counted up to $cap: decides exact scan
// versus the ANN index without paying for counting a huge scope.
MATCH (m:Memory {tenant: $tenant, sessionId: $sessionId})
WHERE m.tier IN $tiers
WITH m LIMIT $cap
RETURN count(m) AS n
