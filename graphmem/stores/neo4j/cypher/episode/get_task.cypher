// A task with its steps in order and the ids of its episodes.
MATCH (t:Task {tenant: $tenant, id: $taskId})
RETURN t {.*, embedding: null} AS task,
       [(t)-[h:HAS_STEP]->(s:Step) | s {.*}] AS steps,
       [(e:Episode)-[:OF_TASK]->(t) | e.id] AS episodes
