// A page of the tasks an owner holds now, in id order after $after, each with its steps
// in order, its hand-overs and its episodes: what an export of the owner writes.
MATCH (t:Task {tenant: $tenant, owner: $owner})
WHERE $after IS NULL OR t.id > $after
WITH t ORDER BY t.id LIMIT $limit
RETURN t {.*, embedding: null} AS task,
       [(t)-[:HAS_STEP]->(s:Step) | s {.*}] AS steps,
       [(t)-[:TRANSFERRED]->(x:Transfer) | x {.*}] AS transfers,
       [(e:Episode)-[:OF_TASK]->(t) | e {.*, embedding: null}] AS episodes
