// The vectors of memories written behind (memory/upsert_hot), once embedded. MATCH, not
// MERGE: a memory forgotten while it was being embedded stays forgotten. Vectors of
// another model than the tenant's ($model: the worker's) are not written, as in
// memory/upsert_batch; the memory is returned all the same (it exists).
// The Tenant node is written once, when it claims a model (memory/upsert_batch says why).
MERGE (t:Tenant {id: $tenant})
WITH t
CALL (t) {
  WITH t
  WHERE t.embeddingModel IS NULL
  SET t.embeddingModel = $model, t.embeddingDimensions = $dimensions
}
WITH t.embeddingModel = $model AS same
UNWIND $rows AS row
MATCH (m:Memory {tenant: $tenant, id: row.id})
CALL (m, row, same) {
  WITH m, row, same
  WHERE same
  SET m.sentenceVectors = row.sentenceVectors,
      m.vectorBytes = row.vectorBytes,
      m.embeddingModel = $model
  WITH m, row
  CALL db.create.setNodeVectorProperty(m, 'embedding', row.embedding)
}
RETURN m.id AS id
