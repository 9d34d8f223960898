// Add new mentions to what they imply: an entity's mentionCount, firstSeen and lastSeen,
// and each user's MENTIONED {count, firstSeen, lastSeen}. Only the edges that
// entity/upsert_mentions marked uncounted, found from their memories: the work is the
// batch's, not the entity's (recounting every mention of a popular entity made each
// write cost more than the one before). entity/refresh_counts recounts from scratch
// where mentions go (forget, merge, split).
// The entity is locked first (the SET), then its edges are read: two writers of the
// same mentions (a retry beside the original) count each edge once. $keys sorted, so
// writers lock entities in one order.
UNWIND $keys AS key
MATCH (e:Entity {tenant: $tenant, key: key})
SET e.mentionCount = coalesce(e.mentionCount, 0)
WITH e
CALL (e) {
  UNWIND [row IN $mentions WHERE row.key = e.key | row.memoryId] AS memoryId
  MATCH (m:Memory {tenant: $tenant, id: memoryId})-[r:MENTIONS]->(e)
  WHERE r.uncounted
  REMOVE r.uncounted
  RETURN collect(m) AS added
}
WITH e, added WHERE size(added) > 0
CALL (e, added) {
  UNWIND added AS m
  WITH min(m.createdAt) AS first, max(m.createdAt) AS last
  SET e.mentionCount = e.mentionCount + size(added),
      e.firstSeen = CASE WHEN e.firstSeen IS NULL OR first < e.firstSeen
                         THEN first ELSE e.firstSeen END,
      e.lastSeen = CASE WHEN e.lastSeen IS NULL OR last > e.lastSeen
                        THEN last ELSE e.lastSeen END
}
CALL (e, added) {
  UNWIND added AS m
  WITH m.userId AS userId, count(m) AS n, min(m.createdAt) AS first, max(m.createdAt) AS last
  WHERE userId IS NOT NULL
  MERGE (u:User {tenant: $tenant, id: userId})
  MERGE (u)-[mm:MENTIONED]->(e)
    ON CREATE SET mm.count = 0
  SET mm.count = mm.count + n,
      mm.firstSeen = CASE WHEN mm.firstSeen IS NULL OR first < mm.firstSeen
                          THEN first ELSE mm.firstSeen END,
      mm.lastSeen = CASE WHEN mm.lastSeen IS NULL OR last > mm.lastSeen
                         THEN last ELSE mm.lastSeen END
}
RETURN count(e) AS counted
