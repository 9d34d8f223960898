// The ids of a session's graph memories, a page at a time (forgetSession deletes them
// with memory/delete_many, in bounded batches).
MATCH (m:Memory {tenant: $tenant, sessionId: $sessionId})
RETURN m.id AS id
LIMIT $limit
