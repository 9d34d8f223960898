// bench/entities.py, write cost: memories $from..$to - 1 of a tenant, each mentioning
// $key when $mention (the entity's existing mentions), else none yet (the memories a
// timed write mentions it from). One memory a day, users u0..u4 in turn.
MERGE (e:Entity {tenant: $tenant, key: $key})
  ON CREATE SET e.name = 'Bob', e.type = 'PERSON', e.aliases = [], e.mentionCount = 0
WITH e
UNWIND range($from, $to - 1) AS i
CREATE (m:Memory {tenant: $tenant, id: 'm' + i, userId: 'u' + (i % 5),
                  createdAt: datetime('2024-01-01T00:00:00Z') + duration({days: i})})
FOREACH (_ IN CASE WHEN $mention THEN [1] ELSE [] END |
  CREATE (m)-[:MENTIONS {surface: 'Bob', via: 'exact'}]->(e))
