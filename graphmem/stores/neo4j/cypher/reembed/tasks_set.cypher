// `graphmem reembed`, step 4: $model's vectors for tasks and episodes (few per tenant,
// rewritten in place once the tenant has flipped).
UNWIND $rows AS row
MATCH (n:Task|Episode {tenant: $tenant, id: row.id})
SET n.embeddingModel = $model
WITH n, row
CALL db.create.setNodeVectorProperty(n, 'embedding', row.embedding)
RETURN count(n) AS written
