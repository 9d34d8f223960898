// What the graph holds of forgotten tasks: the receipt's counts before and the second
// look after, when all must be 0. Steps are found through their task and, once it is
// gone, by the ids counted before ($stepIds); hand-overs and episodes carry their task's
// id; reflections are those drawn from the tasks' episodes, and after, by their keys
// ($reflectionKeys). Vector entries go with their nodes: tasks and episodes with an
// embedding.
UNWIND $taskIds AS taskId
CALL (taskId) {
  MATCH (t:Task {tenant: $tenant, id: taskId})
  RETURN t AS n
  UNION
  MATCH (:Task {tenant: $tenant, id: taskId})-[:HAS_STEP]->(s:Step)
  RETURN s AS n
  UNION
  MATCH (x:Transfer {tenant: $tenant, taskId: taskId})
  RETURN x AS n
  UNION
  MATCH (e:Episode {tenant: $tenant, taskId: taskId})
  RETURN e AS n
}
WITH collect(DISTINCT n) AS found
CALL () {
  UNWIND $stepIds AS stepId
  MATCH (s:Step {tenant: $tenant, id: stepId})
  RETURN collect(s) AS steps
}
WITH found + [s IN steps WHERE NOT s IN found] AS nodes
CALL (nodes) {
  UNWIND [n IN nodes WHERE n:Episode] AS e
  MATCH (r:Reflection {tenant: $tenant})-[:DERIVED_FROM]->(e)
  RETURN collect(DISTINCT r) AS drawn
}
CALL () {
  UNWIND $reflectionKeys AS key
  MATCH (r:Reflection {tenant: $tenant, key: key})
  RETURN collect(r) AS kept
}
WITH nodes, drawn + [r IN kept WHERE NOT r IN drawn] AS reflections
CALL (nodes) {
  UNWIND nodes AS n
  MATCH (n)-[rel]-()
  RETURN count(DISTINCT rel) AS relationships
}
RETURN size([n IN nodes WHERE n:Task]) AS tasks,
       size([n IN nodes WHERE n:Step]) AS steps,
       size([n IN nodes WHERE n:Transfer]) AS transfers,
       size([n IN nodes WHERE n:Episode]) AS episodes,
       size(reflections) AS reflections,
       size([n IN nodes WHERE n.embedding IS NOT NULL]) AS embedded,
       relationships,
       [n IN nodes WHERE n:Step | n.id] AS stepIds,
       [r IN reflections | r.key] AS reflectionKeys
