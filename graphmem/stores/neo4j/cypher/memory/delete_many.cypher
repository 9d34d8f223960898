// Forget many memories at once (prune): the nodes, their share of relation evidence,
// and the keys of the entities they mentioned (refreshed afterwards, orphans removed).
// Returns where each removed memory lived, so that its scopes' versions move.
MATCH (m:Memory {tenant: $tenant})
WHERE m.id IN $ids
OPTIONAL MATCH (m)-[:MENTIONS]->(e:Entity)
WITH collect(DISTINCT m) AS memories, collect(DISTINCT e) AS mentioned
CALL (memories, mentioned) {
  UNWIND mentioned AS e
  MATCH (e)-[r]-(:Entity {tenant: $tenant})
  WHERE r.sources IS NOT NULL
  WITH DISTINCT r, [x IN memories | x.id] AS ids
  SET r.sources = [s IN r.sources WHERE NOT s IN ids]
  SET r.sourceMemoryId = head(r.sources),
      r.weight = CASE WHEN r.weight IS NULL THEN null ELSE size(r.sources) END
  WITH r WHERE size(r.sources) = 0
  DELETE r
}
WITH memories, [e IN mentioned | e.key] AS keys,
     [m IN memories | [m.id, m.sessionId, m.userId]] AS located
CALL (memories) {
  UNWIND memories AS m
  DETACH DELETE m
}
RETURN size(memories) AS removed, keys, located
