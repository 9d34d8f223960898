// forgetTask: every reflection drawn from one of the task's episodes. Its pattern and
// details may quote them (actions, lessons), so keeping it with the link removed would
// keep what was erased; the next reflect derives it again from the episodes that remain.
MATCH (:Task {tenant: $tenant, id: $taskId})<-[:OF_TASK]-(e:Episode)
MATCH (r:Reflection {tenant: $tenant})-[:DERIVED_FROM]->(e)
WITH DISTINCT r
DETACH DELETE r
RETURN count(*) AS removed
