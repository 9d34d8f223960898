// The ids of a user's graph memories (forgetUser deletes them with memory/delete_many).
MATCH (m:Memory {tenant: $tenant, userId: $userId})
RETURN m.id AS id
