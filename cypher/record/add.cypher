// A validated structured record; its top-level scalar fields are also properties named
// f_<field>, so field queries use plain property comparisons.
MATCH (s:RecordSchema {tenant: $tenant, name: $schema})
CREATE (r:Record {tenant: $tenant, id: $id, schema: $schema, data: $data, createdAt: $now})
SET r += $fields
CREATE (r)-[:CONFORMS_TO]->(s)
RETURN r.id AS id, r.createdAt AS createdAt
