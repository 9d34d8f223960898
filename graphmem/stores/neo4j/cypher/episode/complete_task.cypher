// Close a task with its final status.
MATCH (t:Task {tenant: $tenant, id: $taskId})
SET t.status = $status, t.completedAt = $now
RETURN t {.*, embedding: null} AS task
