// Write-behind of hot items: each becomes a node with tier 'hot' at once, so BM25 finds
// it before its vectors exist (memory/set_vectors adds them a moment later). A node
// that exists already (spilled, promoted or written behind before) is left as it is:
// its tier and access data are the spill's or promotion's to set, not this copy's.
// $label puts the node in its tenant's fulltext index (tenant/fulltext_index).
// No row of an erased subject created at or before its erasure is written (a tombstone,
// erasure/tombstone): in this statement's transaction, so that a late writer (a job still
// on the stream, a spill in flight, an import of an old export) cannot bring it back.
MERGE (t:Tenant {id: $tenant})
WITH t
UNWIND $items AS it
WITH t, it
WHERE NOT EXISTS { MATCH (x:Tombstone {tenant: $tenant, kind: 'user', subject: it.userId})
                   WHERE x.at >= it.createdAt }
  AND NOT EXISTS { MATCH (x:Tombstone {tenant: $tenant, kind: 'session', subject: it.sessionId})
                   WHERE x.at >= it.createdAt }
  AND NOT EXISTS { MATCH (x:Tombstone {tenant: $tenant, kind: 'memory', subject: it.id}) }
  AND NOT EXISTS { MATCH (x:Tombstone {tenant: $tenant, kind: 'memory', subject: it.origin}) }
MERGE (m:Memory {tenant: $tenant, id: it.id})
  ON CREATE SET m:$($label),
                m.sessionId = it.sessionId,
                m.userId = it.userId,
                m.content = it.content,
                m.type = it.type,
                m.tier = 'hot',
                m.accessCount = it.accessCount,
                m.lastAccessedAt = it.lastAccessedAt,
                m.createdAt = it.createdAt,
                m.recordedAt = it.recordedAt,
                m.relevanceScore = it.relevanceScore,
                m.tokenCount = it.tokenCount,
                m.contentHash = it.contentHash,
                m.metadata = it.metadata,
                m.seq = it.seq,
                m.scopeToken = it.scopeToken,
                m.termBytes = it.termBytes,
                m.termVersion = it.termVersion,
                m.speaker = it.speaker,
                m.writtenBehindAt = datetime()
MERGE (s:Session {tenant: $tenant, id: it.sessionId})
MERGE (s)-[:HAS_MEMORY]->(m)
WITH m, s, it
CALL (s, it) {
  WITH s, it
  WHERE it.userId IS NOT NULL
  MERGE (u:User {tenant: $tenant, id: it.userId})
  MERGE (u)-[:HAS_SESSION]->(s)
}
RETURN m.id AS id
