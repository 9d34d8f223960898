// Counts and sizes of graph memories per tier and type (optionally for a session or user).
MATCH (m:Memory {tenant: $tenant})
WHERE ($sessionId IS NULL OR m.sessionId = $sessionId)
  AND ($userId IS NULL OR m.userId = $userId)
RETURN m.tier AS tier, m.type AS type, count(m) AS items,
       coalesce(sum(m.tokenCount), 0) AS tokens, coalesce(sum(size(m.content)), 0) AS bytes
ORDER BY tier, type
