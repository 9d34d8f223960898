// Forget one memory: the node, its relationships, and its share of relation evidence
// (relations it asserted lose it from `sources`; relations left with none are deleted).
// Returns the keys of the entities it mentioned so entity/refresh_counts can refresh
// their counts and remove orphans.
MATCH (m:Memory {tenant: $tenant, id: $id})
OPTIONAL MATCH (m)-[:MENTIONS]->(e:Entity)
WITH m, m.id AS id, collect(DISTINCT e) AS mentioned
CALL (id, mentioned) {
  UNWIND mentioned AS e
  MATCH (e)-[r]-(:Entity {tenant: $tenant})
  WHERE r.sources IS NOT NULL AND id IN r.sources
  WITH DISTINCT r, id
  SET r.sources = [s IN r.sources WHERE s <> id]
  SET r.sourceMemoryId = head(r.sources),
      r.weight = CASE WHEN r.weight IS NULL THEN null ELSE size(r.sources) END
  WITH r WHERE size(r.sources) = 0
  DELETE r
}
DETACH DELETE m
RETURN id, [e IN mentioned | e.key] AS keys
