// Backfill: set each listed memory's scopeToken (computed by the service).
UNWIND $rows AS row
MATCH (m:Memory {tenant: row.tenant, id: row.id})
SET m.scopeToken = row.scopeToken
