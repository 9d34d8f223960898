// MCP delete_entities: the named entities of the tenant and every relation to or from
// them; names the tenant does not have are ignored.
UNWIND $names AS name
MATCH (e:KGEntity {tenant: $tenant, name: name})
DETACH DELETE e
RETURN count(*) AS deleted
