// Forget one memory: the node and its relationships.
MATCH (m:Memory {tenant: $tenant, id: $id})
WITH m, m.id AS id
DETACH DELETE m
RETURN id
