// Browser guide: a user's entity neighbourhood: what they mentioned, and how those
// entities relate (LOCATED_IN, NEAR, WORKS_FOR, CO_OCCURS). :param userId => 'ada'.
MATCH (u:User {tenant: $tenant, id: $userId})-[mentioned:MENTIONED]->(e:Entity {tenant: $tenant})
OPTIONAL MATCH (e)-[rel:LOCATED_IN|NEAR|WORKS_FOR|CO_OCCURS]-(other:Entity {tenant: $tenant})
RETURN u, mentioned, e, rel, other
LIMIT 200
