// Entities mentioned in the same memory co-occur; weight = number of such memories.
UNWIND $pairs AS row
// evidence only from a memory that still exists: one forgotten while its entities were
// being read leaves no trace of its id here
WITH row WHERE EXISTS { MATCH (:Memory {tenant: $tenant, id: row.memoryId}) }
MATCH (a:Entity {tenant: $tenant, key: row.a})
MATCH (b:Entity {tenant: $tenant, key: row.b})
MERGE (a)-[r:CO_OCCURS]->(b)
  ON CREATE SET r.sources = [], r.tenant = $tenant
SET r.sources = CASE WHEN row.memoryId IN r.sources THEN r.sources
                     ELSE r.sources + row.memoryId END,
    r.weight = size(r.sources)
RETURN count(*) AS pairs
