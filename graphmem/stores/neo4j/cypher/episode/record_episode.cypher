// Store an episode: what happened on a task, how it ended, what was learned. It happened
// (createdAt, its valid time) and was recorded (recordedAt) at $now.
MATCH (t:Task {tenant: $tenant, id: $taskId})
CREATE (e:Episode {tenant: $tenant, id: $id, taskId: $taskId, description: $description,
                   outcome: $outcome, success: $success, signature: $signature,
                   lessons: $lessons, metrics: $metrics, mappings: $mappings, createdAt: $now, recordedAt: $now,
                   embeddingModel: $model})
CREATE (e)-[:OF_TASK]->(t)
WITH e
CALL db.create.setNodeVectorProperty(e, 'embedding', $embedding)
RETURN e {.*, embedding: null} AS episode
