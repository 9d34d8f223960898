// forgetTask: a batch of the task's steps, hand-overs and episodes (with their vector
// entries), run until it removes none, so no transaction holds many locks; the task
// node goes last (erasure/task_remove), so a retry still finds what is left.
MATCH (t:Task {tenant: $tenant, id: $taskId})
CALL (t) {
  MATCH (t)-[:HAS_STEP]->(s:Step)
  RETURN s AS n
  UNION
  MATCH (t)-[:TRANSFERRED]->(x:Transfer)
  RETURN x AS n
  UNION
  MATCH (e:Episode)-[:OF_TASK]->(t)
  RETURN e AS n
}
WITH n LIMIT $limit
WITH n, n:Step AS step, n:Transfer AS transfer, n:Episode AS episode,
     n.embedding IS NOT NULL AS embedded
DETACH DELETE n
RETURN count(*) AS removed,
       sum(CASE WHEN step THEN 1 ELSE 0 END) AS steps,
       sum(CASE WHEN transfer THEN 1 ELSE 0 END) AS transfers,
       sum(CASE WHEN episode THEN 1 ELSE 0 END) AS episodes,
       sum(CASE WHEN embedded THEN 1 ELSE 0 END) AS embedded
