// A user's entities, most recently mentioned first, optionally of one type. Entities
// merged into another (SAME_AS) are reported as the canonical one.
MATCH (u:User {tenant: $tenant, id: $userId})-[r:MENTIONED]->(e:Entity)
OPTIONAL MATCH (e)-[:SAME_AS]->(c:Entity)
WITH coalesce(c, e) AS entity, r
WHERE $type IS NULL OR entity.type = $type
WITH entity, sum(r.count) AS count, min(r.firstSeen) AS firstSeen, max(r.lastSeen) AS lastSeen
RETURN entity {.key, .name, .type, .aliases, .mentionCount, .firstSeen, .lastSeen,
               mergedFrom: [(s:Entity)-[:SAME_AS]->(entity) | s.key]} AS entity,
       count, firstSeen, lastSeen
ORDER BY lastSeen DESC, entity.name
LIMIT $limit
