// bench/langgraph_store.py, after a run: its tenant's store items, deleted in batches (an
// auto-commit transaction), so that the next run starts from the same database size
MATCH (n:StoreItem)
WHERE n.tenant = $tenant
CALL (n) {
  DELETE n
} IN TRANSACTIONS OF 10000 ROWS
