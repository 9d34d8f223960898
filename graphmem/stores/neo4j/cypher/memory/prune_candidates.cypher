// What a prune policy looks at: graph memories in scope with their age and size. The
// service decides (by age, count and size per session) which of them the policy removes.
MATCH (m:Memory {tenant: $tenant})
WHERE m.tier IN $tiers
  AND ($types IS NULL OR m.type IN $types)
  AND ($sessionId IS NULL OR m.sessionId = $sessionId)
  AND ($userId IS NULL OR m.userId = $userId)
RETURN m.id AS id, m.sessionId AS sessionId, m.type AS type, m.tier AS tier,
       m.createdAt AS createdAt, m.seq AS seq, size(m.content) AS bytes
