// Tenants with records stored before field tokens (a property per field), for the
// one-off migration (stores/neo4j/record_fields.py) to visit each.
MATCH (r:Record)
WHERE r.fields IS NULL
RETURN DISTINCT r.tenant AS tenant
ORDER BY tenant
