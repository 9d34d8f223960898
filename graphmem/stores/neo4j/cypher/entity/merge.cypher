// Merge one entity into another without moving anything: a SAME_AS edge records who,
// when and why, every query folds the source into the target, and deleting the edge
// (entity/undo_merge) restores both exactly. Merges never cross tenants.
MATCH (s:Entity {tenant: $tenant, key: $source})
MATCH (t:Entity {tenant: $tenant, key: $target})
WHERE s <> t AND NOT (t)-[:SAME_AS]->() AND NOT (s)-[:SAME_AS]->()
MERGE (s)-[r:SAME_AS]->(t)
  ON CREATE SET r.id = $mergeId, r.at = $now, r.reason = $reason, r.tenant = $tenant
// entities already merged into the source follow it to the new target
WITH s, t, r
OPTIONAL MATCH (child:Entity)-[old:SAME_AS]->(s)
FOREACH (_ IN CASE WHEN child IS NULL THEN [] ELSE [1] END |
  MERGE (child)-[moved:SAME_AS]->(t)
    ON CREATE SET moved.id = old.id, moved.at = old.at, moved.reason = old.reason,
                  moved.tenant = $tenant, moved.via = s.key
  DELETE old)
RETURN DISTINCT r.id AS mergeId, s.key AS source, t.key AS target
