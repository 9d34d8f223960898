// Undo a variant merge: mentions written with one surface form move from the entity
// to an entity of their own (key $newKey), which records where it was split from.
MATCH (e:Entity {tenant: $tenant, key: $key})<-[r:MENTIONS]-(m:Memory {tenant: $tenant})
WHERE toLower(r.surface) = $surface
MERGE (n:Entity {tenant: $tenant, key: $newKey})
  ON CREATE SET n.name = $name, n.type = e.type, n.aliases = [], n.labels = e.labels,
                n.splitFrom = e.key, n.createdAt = $now
MERGE (m)-[nr:MENTIONS]->(n)
SET nr.surface = r.surface, nr.via = 'split', nr.start = r.start, nr.end = r.end,
    n.aliases = CASE WHEN r.surface IN n.aliases THEN n.aliases ELSE n.aliases + r.surface END
DELETE r
WITH DISTINCT e, n
SET e.aliases = [a IN e.aliases WHERE toLower(a) <> $surface]
RETURN n.key AS key
