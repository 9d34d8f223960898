// bench/entities.py, after the write-cost runs: the tenant's memories and entity, in
// batches (an auto-commit transaction)
MATCH (n)
WHERE n.tenant = $tenant AND (n:Memory OR n:Entity OR n:User)
CALL (n) {
  DETACH DELETE n
} IN TRANSACTIONS OF 5000 ROWS
