// Write a batch of spilled items. Idempotent: MERGE on (tenant, id) and every property
// is set from the item, so a retried or repeated spill converges to one node per item.
// $label puts the node in its tenant's fulltext index (tenant/fulltext_index).
// vectorBytes copies the embedding as float32 bytes: what search reads into memory;
// termBytes holds the hashes of its stems, for BM25 inside a scope (enrich/lexical.py).
// A row without vectors (left to the enrichment worker, memory/writepath/enrichment.py) keeps the
// node's: the worker may have set them already (memory/set_vectors), or will.
// Vectors are $model's ($dimensions): a tenant holds one model's vectors, the one its
// first vectors came from, until `graphmem reembed` moves it to another (reembed/*). A
// row's vectors from another model than the tenant's are not written (docs/recall.md,
// "One model per tenant").
// The claim writes the Tenant node once: a write to it on every batch would lock it, and
// every write of the tenant would wait for every other (measured: a spill of 2,000
// memories beside the worker took 55 s instead of 2).
// No row of an erased subject created at or before its erasure is written (a tombstone,
// erasure/tombstone): in this statement's transaction, so that a late writer (a job still
// on the stream, a spill in flight, an import of an old export) cannot bring it back.
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
  WHERE t.embeddingModel IS NULL AND any(it IN $items WHERE it.vectorBytes IS NOT NULL)
  SET t.embeddingModel = $model, t.embeddingDimensions = $dimensions
}
WITH coalesce(t.embeddingModel = $model, false) AS same
UNWIND $items AS it
WITH same, it
WHERE NOT EXISTS { MATCH (x:Tombstone {tenant: $tenant, kind: 'user', subject: it.userId})
                   WHERE x.at >= it.createdAt }
  AND NOT EXISTS { MATCH (x:Tombstone {tenant: $tenant, kind: 'session', subject: it.sessionId})
                   WHERE x.at >= it.createdAt }
  AND NOT EXISTS { MATCH (x:Tombstone {tenant: $tenant, kind: 'memory', subject: it.id}) }
  AND NOT EXISTS { MATCH (x:Tombstone {tenant: $tenant, kind: 'memory', subject: it.origin}) }
WITH it, same AND it.vectorBytes IS NOT NULL AS fresh
MERGE (m:Memory {tenant: $tenant, id: it.id})
SET m:$($label),
    m.sessionId = it.sessionId,
    m.userId = it.userId,
    m.content = it.content,
    m.type = it.type,
    m.tier = it.tier,
    m.accessCount = it.accessCount,
    m.lastAccessedAt = it.lastAccessedAt,
    m.createdAt = it.createdAt,
    m.recordedAt = coalesce(m.recordedAt, it.recordedAt),
    m.relevanceScore = it.relevanceScore,
    m.tokenCount = it.tokenCount,
    m.contentHash = it.contentHash,
    m.metadata = it.metadata,
    m.seq = it.seq,
    m.scopeToken = it.scopeToken,
    m.termBytes = it.termBytes,
    m.termVersion = it.termVersion,
    m.speaker = it.speaker,
    m.sentenceVectors = CASE WHEN fresh THEN it.sentenceVectors ELSE m.sentenceVectors END,
    m.vectorBytes = CASE WHEN fresh THEN it.vectorBytes ELSE m.vectorBytes END,
    m.embeddingModel = CASE WHEN fresh THEN $model ELSE m.embeddingModel END,
    m.spilledAt = datetime()
WITH m, it, fresh
CALL (m, it, fresh) {
  WITH m, it, fresh
  WHERE fresh AND it.embedding IS NOT NULL
  CALL db.create.setNodeVectorProperty(m, 'embedding', it.embedding)
}
MERGE (s:Session {tenant: $tenant, id: it.sessionId})
MERGE (s)-[:HAS_MEMORY]->(m)
WITH m, s, it
CALL (s, it) {
  WITH s, it
  WHERE it.userId IS NOT NULL
  MERGE (u:User {tenant: $tenant, id: it.userId})
  MERGE (u)-[:HAS_SESSION]->(s)
}
RETURN m.id AS id, m.tier AS tier
