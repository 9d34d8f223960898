// forgetTask's last graph step: the task node with its vector entry, once its parts are
// gone (every writer of a part checks the tombstone after taking the task's lock).
MATCH (t:Task {tenant: $tenant, id: $taskId})
WITH t, t.embedding IS NOT NULL AS embedded
DETACH DELETE t
RETURN count(*) AS tasks, sum(CASE WHEN embedded THEN 1 ELSE 0 END) AS embedded
