// Memories whose scopeToken holds only the tenant's token (written before session and
// user tokens existed); every current memory carries at least two tokens.
MATCH (m:Memory)
WHERE m.scopeToken IS NOT NULL AND NOT m.scopeToken CONTAINS ' '
RETURN m.tenant AS tenant, m.id AS id, m.sessionId AS sessionId, m.userId AS userId
LIMIT $batch
