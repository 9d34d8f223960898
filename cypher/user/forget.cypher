// Forget a user: every memory of theirs (with its share of relation evidence), their
// MENTIONED edges, sessions left empty, and the user node. Returns the entity keys the
// memories mentioned (entity/refresh_counts then removes orphans) and what was removed.
MATCH (m:Memory {tenant: $tenant, userId: $userId})
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
WITH memories, [e IN mentioned | e.key] AS keys
CALL (memories) {
  UNWIND memories AS m
  DETACH DELETE m
}
WITH keys, size(memories) AS removed
OPTIONAL MATCH (u:User {tenant: $tenant, id: $userId})
OPTIONAL MATCH (u)-[:HAS_SESSION]->(s:Session)
WHERE NOT (s)-[:HAS_MEMORY]->()
WITH keys, removed, u, collect(s) AS empty
CALL (empty) {
  UNWIND empty AS s
  DETACH DELETE s
}
CALL (u) {
  WITH u WHERE u IS NOT NULL
  DETACH DELETE u
}
RETURN keys, removed, size(empty) AS sessions
