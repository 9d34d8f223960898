// Memories in scope that mention any of the given entities (or entities merged into
// them), with how many of those entities each mentions: recall's entity component.
UNWIND $keys AS key
MATCH (e:Entity {tenant: $tenant, key: key})
OPTIONAL MATCH (s:Entity)-[:SAME_AS]->(e)
WITH key, e, collect(s) AS merged
WITH key, [e] + merged AS members
UNWIND members AS x
MATCH (m:Memory {tenant: $tenant})-[:MENTIONS]->(x)
WHERE ($sessionId IS NULL OR m.sessionId = $sessionId)
  AND ($userId IS NULL OR m.userId = $userId)
  AND m.tier IN $tiers
WITH m, count(DISTINCT key) AS matched
ORDER BY matched DESC, m.seq DESC
LIMIT $limit
RETURN m.id AS id, matched
