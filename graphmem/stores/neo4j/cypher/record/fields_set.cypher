// Records rewritten with their field tokens: the map replaces every property, so the
// old per-field properties (f_<name>) go with it.
UNWIND $rows AS row
MATCH (r:Record {tenant: $tenant, id: row.id})
SET r = {tenant: r.tenant, id: r.id, schema: r.schema, data: r.data, createdAt: r.createdAt,
         recordedAt: coalesce(r.recordedAt, r.createdAt), fields: row.fields}
