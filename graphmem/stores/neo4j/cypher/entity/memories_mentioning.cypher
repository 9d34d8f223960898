// Memories in scope that mention any of the given entities (or entities merged into
// them), with how many of those entities each mentions: recall's entity component.
// Seen at the read's moment ($asOf, $validAt, $history: domain/moments.py, the
// same predicate in every read of memories at a moment; docs/concepts.md).
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
  AND ($history OR CASE WHEN $asOf IS NULL THEN m.retractedAt IS NULL
    ELSE (m.retractedAt IS NULL OR m.retractedAt > $asOf)
      AND none(i IN range(0, size(coalesce(m.restoredAt, [])) - 1)
               WHERE m.pastRetractedAt[i] <= $asOf < m.restoredAt[i]) END)
  AND ($asOf IS NULL OR coalesce(m.recordedAt, m.createdAt) <= $asOf)
  AND ($validAt IS NULL OR m.createdAt <= $validAt)
WITH m, count(DISTINCT key) AS matched
ORDER BY matched DESC, m.seq DESC
LIMIT $limit
RETURN m.id AS id, matched
