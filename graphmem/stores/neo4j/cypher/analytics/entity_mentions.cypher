// Entities with their mention counts and how many users mention them (analytics).
MATCH (e:Entity {tenant: $tenant})
RETURN e.key AS id, e.name AS name, e.type AS type, coalesce(e.mentionCount, 0) AS mentions,
       count { (:User {tenant: $tenant})-[:MENTIONED]->(e) } AS users,
       e.firstSeen AS firstSeen, e.lastSeen AS lastSeen
ORDER BY mentions DESC, name
