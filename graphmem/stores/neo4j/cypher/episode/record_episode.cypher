// Store an episode: what happened on a task, how it ended, what was learned. It happened
// (createdAt, its valid time) and was recorded (recordedAt) at $now. The task's lock
// first, then the tombstone check: a forgetTask in progress writes its tombstone under
// that lock, so no episode lands on a task being forgotten.
MATCH (t:Task {tenant: $tenant, id: $taskId})
SET t.lockedAt = $now
WITH t
WHERE NOT EXISTS { (:Tombstone {tenant: $tenant, kind: 'task', subject: $taskId}) }
CREATE (e:Episode {tenant: $tenant, id: $id, taskId: $taskId, description: $description,
                   outcome: $outcome, success: $success, signature: $signature,
                   lessons: $lessons, metrics: $metrics, mappings: $mappings, createdAt: $now, recordedAt: $now,
                   embeddingModel: $model})
CREATE (e)-[:OF_TASK]->(t)
WITH e
CALL db.create.setNodeVectorProperty(e, 'embedding', $embedding)
RETURN e {.*, embedding: null} AS episode
