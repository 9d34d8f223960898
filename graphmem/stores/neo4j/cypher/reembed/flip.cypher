// `graphmem reembed`, step 2: the tenant holds $model's vectors from now on: servers
// embedding with another model stop searching its vectors and writing theirs
// (memory/upsert_batch, memory/set_vectors).
// It locks every one of the tenant's model stripes first, in order (a writer locks one):
// a writer that read the old model commits before the flip does, and the swap rounds
// after it (memory_pending) embed again what that writer wrote.
UNWIND range(0, $stripes - 1) AS n
MERGE (stripe:ModelStripe {tenant: $tenant, stripe: n})
SET stripe._lock = true
REMOVE stripe._lock
WITH count(stripe) AS locked
MERGE (t:Tenant {id: $tenant})
SET t.embeddingModel = $model, t.embeddingDimensions = $dimensions
RETURN t.embeddingModel AS model
