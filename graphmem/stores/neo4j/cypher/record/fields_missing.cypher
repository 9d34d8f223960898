// A batch of the tenant's records stored before field tokens (a property per field).
MATCH (r:Record {tenant: $tenant})
WHERE r.fields IS NULL
RETURN r.id AS id, r.data AS data
LIMIT $batch
