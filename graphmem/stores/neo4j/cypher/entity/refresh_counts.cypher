// Recompute what mentions imply from the MENTIONS edges themselves: an entity's
// mentionCount, firstSeen and lastSeen, and each user's MENTIONED {count, firstSeen,
// lastSeen}. Run where mentions go (forget, merge, split); new mentions are added by
// entity/count_mentions. Entities left with no mention are deleted with their
// relations: forgetting never leaves orphans.
UNWIND $keys AS key
MATCH (e:Entity {tenant: $tenant, key: key})
CALL (e) {
  OPTIONAL MATCH (m:Memory)-[r:MENTIONS]->(e)
  // counted here: entity/count_mentions must not add it again
  FOREACH (_ IN CASE WHEN r.uncounted THEN [1] ELSE [] END | REMOVE r.uncounted)
  WITH e, count(m) AS n, min(m.createdAt) AS first, max(m.createdAt) AS last
  SET e.mentionCount = n, e.firstSeen = first, e.lastSeen = last
}
CALL (e) {
  OPTIONAL MATCH (u:User {tenant: $tenant})-[old:MENTIONED]->(e)
  DELETE old
}
CALL (e) {
  MATCH (m:Memory {tenant: $tenant})-[:MENTIONS]->(e)
  WHERE m.userId IS NOT NULL
  WITH e, m.userId AS userId, count(m) AS n, min(m.createdAt) AS first, max(m.createdAt) AS last
  MERGE (u:User {tenant: $tenant, id: userId})
  CREATE (u)-[:MENTIONED {count: n, firstSeen: first, lastSeen: last}]->(e)
}
WITH e
WHERE e.mentionCount = 0
DETACH DELETE e
RETURN count(*) AS deleted
