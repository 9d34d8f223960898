// A validated structured record, recorded now (recordedAt: record time; any valid time
// is the data's own, which graphmem does not read). Its top-level scalar fields are tokens in one list
// property (stores/neo4j/record_fields.py), never properties of their own: field names
// are the tenant's, and each new property name would be the whole database's for good.
MATCH (s:RecordSchema {tenant: $tenant, name: $schema})
CREATE (r:Record {tenant: $tenant, id: $id, schema: $schema, data: $data, createdAt: $now,
                  recordedAt: $now, fields: $fields})
CREATE (r)-[:CONFORMS_TO]->(s)
RETURN r.id AS id, r.createdAt AS createdAt
