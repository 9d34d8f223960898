// A task's audit trail of hand-overs, oldest first.
MATCH (t:Task {tenant: $tenant, id: $taskId})-[:TRANSFERRED]->(x:Transfer)
RETURN x {.*} AS transfer
ORDER BY x.toGeneration
