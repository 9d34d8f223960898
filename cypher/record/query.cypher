// Records of a schema whose fields equal the given values.
MATCH (r:Record {tenant: $tenant, schema: $schema})
WHERE all(k IN keys($where) WHERE r['f_' + k] = $where[k])
RETURN r.id AS id, r.data AS data, r.createdAt AS createdAt
ORDER BY r.createdAt DESC
LIMIT $limit
