// MCP create_entities: entities keyed by tenant + exact name. A name the tenant already
// has is left as it is; `createdIn` marks what this call created, which is what it
// returns (two concurrent calls creating one name: the constraint lets one win).
UNWIND $entities AS row
MERGE (e:KGEntity {tenant: $tenant, name: row.name})
  ON CREATE SET e.entityType = row.entityType, e.observations = row.observations,
                e.createdAt = $now, e.updatedAt = $now, e.createdIn = $callId
WITH e, row
WHERE e.createdIn = $callId
RETURN e.name AS name, e.entityType AS entityType, e.observations AS observations
