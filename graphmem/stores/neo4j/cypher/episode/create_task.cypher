// A task an agent works on; steps and episodes hang off it.
CREATE (t:Task {tenant: $tenant, id: $id, description: $description, status: 'open',
                owner: $owner, generation: 1, createdAt: $now, embeddingModel: $model})
WITH t
CALL db.create.setNodeVectorProperty(t, 'embedding', $embedding)
RETURN t {.*, embedding: null} AS task
