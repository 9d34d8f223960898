// Append a step: HAS_STEP {order} from the task and NEXT from the previous last step.
MATCH (t:Task {tenant: $tenant, id: $taskId})
OPTIONAL MATCH (t)-[h:HAS_STEP]->(prev:Step)
WITH t, prev, h ORDER BY h.order DESC LIMIT 1
WITH t, prev, coalesce(h.order, -1) + 1 AS order
CREATE (s:Step {tenant: $tenant, id: $id, action: $action, result: $result, status: $status,
                startedAt: $startedAt, endedAt: $endedAt, order: order})
CREATE (t)-[:HAS_STEP {order: order}]->(s)
FOREACH (_ IN CASE WHEN prev IS NULL THEN [] ELSE [1] END | CREATE (prev)-[:NEXT]->(s))
RETURN s {.*} AS step
