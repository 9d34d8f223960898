// The vectors of memories written behind (memory/upsert_hot), once embedded. MATCH, not
// MERGE: a memory forgotten while it was being embedded stays forgotten. Vectors of
// another model than the tenant's ($model: the worker's) are not written, as in
// memory/upsert_batch; the memory is returned all the same (it exists).
// The Tenant node is written once, when it claims a model (memory/upsert_batch says why).
// The writer first locks one of the tenant's model stripes ($stripe), and only then reads
// the tenant's model: a `graphmem reembed` flip (reembed/flip) locks every stripe, so it
// waits for a writer that read the old model, and a writer after it reads the new one.
MERGE (stripe:ModelStripe {tenant: $tenant, stripe: $stripe})
SET stripe._lock = true
REMOVE stripe._lock
WITH stripe
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
  // The SET above waited for the node's write lock if a forget was deleting it; once
  // that delete has committed the node is no longer found by its id, and the procedure
  // would fail the whole batch ("Unable to load NODE"): a memory forgotten while it
  // was embedded is skipped, as one forgotten before.
  WITH m, row
  WHERE EXISTS { MATCH (x:Memory {tenant: $tenant, id: row.id}) WHERE x = m }
  CALL db.create.setNodeVectorProperty(m, 'embedding', row.embedding)
}
WITH row
WHERE EXISTS { MATCH (:Memory {tenant: $tenant, id: row.id}) }
RETURN row.id AS id
