// Append a step: HAS_STEP {order} from the task and NEXT from the previous last step.
// A task with an owner takes steps only from that owner at its current generation; the
// SET takes the write lock first, so the check and the write see the same generation,
// and a forgetTask that committed its tombstone meanwhile (erasure/task_tombstone).
MATCH (t:Task {tenant: $tenant, id: $taskId})
SET t.lockedAt = $startedAt
WITH t
WHERE (t.owner IS NULL OR (t.owner = $owner AND coalesce(t.generation, 1) = $generation))
  AND NOT EXISTS { (:Tombstone {tenant: $tenant, kind: 'task', subject: $taskId}) }
OPTIONAL MATCH (t)-[h:HAS_STEP]->(prev:Step)
WITH t, prev, h ORDER BY h.order DESC LIMIT 1
WITH t, prev, coalesce(h.order, -1) + 1 AS order
CREATE (s:Step {tenant: $tenant, id: $id, action: $action, result: $result, status: $status,
                startedAt: $startedAt, endedAt: $endedAt, order: order,
                owner: $owner, generation: $generation})
CREATE (t)-[:HAS_STEP {order: order}]->(s)
FOREACH (_ IN CASE WHEN prev IS NULL THEN [] ELSE [1] END | CREATE (prev)-[:NEXT]->(s))
RETURN s {.*} AS step
