// `graphmem reembed`, step 2: the tenant holds $model's vectors from now on: servers
// embedding with another model stop searching its vectors and writing theirs
// (memory/upsert_batch, memory/set_vectors).
MERGE (t:Tenant {id: $tenant})
SET t.embeddingModel = $model, t.embeddingDimensions = $dimensions
RETURN t.embeddingModel AS model
