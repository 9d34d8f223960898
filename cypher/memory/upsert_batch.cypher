// Write a batch of spilled items. Idempotent: MERGE on (tenant, id) and every property
// is set from the item, so a retried or repeated spill converges to one node per item.
// $label puts the node in its tenant's fulltext index (tenant/fulltext_index).
// vectorBytes copies the embedding as float32 bytes: what search reads into memory;
// termBytes holds the hashes of its stems, for BM25 inside a scope (enrich/lexical.py).
// A row without vectors (left to the enrichment worker, memory/enrichment.py) keeps the
// node's: the worker may have set them already (memory/set_vectors), or will.
MERGE (t:Tenant {id: $tenant})
WITH t
UNWIND $items AS it
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
    m.relevanceScore = it.relevanceScore,
    m.tokenCount = it.tokenCount,
    m.contentHash = it.contentHash,
    m.metadata = it.metadata,
    m.seq = it.seq,
    m.scopeToken = it.scopeToken,
    m.termBytes = it.termBytes,
    m.termVersion = it.termVersion,
    m.speaker = it.speaker,
    m.sentenceVectors = CASE WHEN it.vectorBytes IS NULL THEN m.sentenceVectors
                             ELSE it.sentenceVectors END,
    m.vectorBytes = coalesce(it.vectorBytes, m.vectorBytes),
    m.spilledAt = datetime()
WITH m, it
CALL (m, it) {
  WITH m, it
  WHERE it.embedding IS NOT NULL
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
