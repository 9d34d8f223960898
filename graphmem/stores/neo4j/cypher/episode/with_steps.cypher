// Episodes (optionally of one signature) with their task's steps in order, for reflect.
MATCH (e:Episode {tenant: $tenant})-[:OF_TASK]->(t:Task {tenant: $tenant})
WHERE $signature IS NULL OR e.signature = $signature
WITH e, t ORDER BY e.createdAt
RETURN e {.*, embedding: null} AS episode,
       [(t)-[h:HAS_STEP]->(s:Step) | s {.*}] AS steps
