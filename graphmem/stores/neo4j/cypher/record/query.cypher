// Records of a schema whose fields equal the given values (each a token, see add).
MATCH (r:Record {tenant: $tenant, schema: $schema})
WHERE all(t IN $tokens WHERE t IN r.fields)
RETURN r.id AS id, r.data AS data, r.createdAt AS createdAt
ORDER BY r.createdAt DESC
LIMIT $limit
