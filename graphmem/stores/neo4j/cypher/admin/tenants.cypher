// Tenants that own graph memories (maintenance visits each in turn).
MATCH (t:Tenant)
RETURN t.id AS tenant
ORDER BY tenant
