// Entity pairs mentioned in the same memories, with the number of such memories.
MATCH (a:Entity {tenant: $tenant})-[r:CO_OCCURS]->(b:Entity {tenant: $tenant})
RETURN a.name AS a, b.name AS b, a.type AS aType, b.type AS bType, r.weight AS weight
ORDER BY weight DESC, a, b
