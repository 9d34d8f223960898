// A user's entities, most recently mentioned first, optionally of one type. Entities
// merged into another (SAME_AS) are reported as the canonical one. The default read
// (no $asOf, $validAt or $history) counts from the MENTIONED edges, keeping an entity
// only while a memory of the user that mentions it is held (not retracted); a read at a
// moment counts the user's memories seen then (the predicate of memory/text_hits),
// their first and last dates being those memories' (docs/concepts.md, "Two clocks").
CALL () {
  WITH 1 AS go WHERE $asOf IS NULL AND $validAt IS NULL AND NOT $history
  MATCH (u:User {tenant: $tenant, id: $userId})-[r:MENTIONED]->(e:Entity)
  WHERE EXISTS {
    MATCH (m:Memory)-[:MENTIONS]->(e)
    WHERE m.tenant = $tenant AND m.userId = $userId AND m.retractedAt IS NULL
  }
  RETURN e, r.count AS n, r.firstSeen AS first, r.lastSeen AS last
  UNION ALL
  WITH 1 AS go WHERE $asOf IS NOT NULL OR $validAt IS NOT NULL OR $history
  MATCH (m:Memory {tenant: $tenant, userId: $userId})-[:MENTIONS]->(e:Entity)
  WHERE ($history OR CASE WHEN $asOf IS NULL THEN m.retractedAt IS NULL
      ELSE (m.retractedAt IS NULL OR m.retractedAt > $asOf)
        AND none(i IN range(0, size(coalesce(m.restoredAt, [])) - 1)
                 WHERE m.pastRetractedAt[i] <= $asOf < m.restoredAt[i]) END)
    AND ($asOf IS NULL OR coalesce(m.recordedAt, m.createdAt) <= $asOf)
    AND ($validAt IS NULL OR m.createdAt <= $validAt)
  RETURN e, 1 AS n, m.createdAt AS first, m.createdAt AS last
}
OPTIONAL MATCH (e)-[:SAME_AS]->(c:Entity)
WITH coalesce(c, e) AS entity, n, first, last
WHERE $type IS NULL OR entity.type = $type
WITH entity, sum(n) AS count, min(first) AS firstSeen, max(last) AS lastSeen
RETURN entity {.key, .name, .type, .aliases, .mentionCount, .firstSeen, .lastSeen,
               mergedFrom: [(s:Entity)-[:SAME_AS]->(entity) | s.key]} AS entity,
       count, firstSeen, lastSeen
ORDER BY lastSeen DESC, entity.name
LIMIT $limit
