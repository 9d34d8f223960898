// Conversational context for a search without its scope in memory: the $window turns
// just before and after each given memory in its session (by seq), inside the search's
// scope ($userId when it has one), with their vectors; one row of lists, `anchors`
// naming the memory each row is next to.
UNWIND $ids AS id
MATCH (m:Memory {tenant: $tenant, id: id})
CALL (m) {
  MATCH (p:Memory {tenant: $tenant, sessionId: m.sessionId})
  WHERE p.seq < m.seq AND p.tier IN $tiers AND ($userId IS NULL OR p.userId = $userId)
  RETURN p ORDER BY p.seq DESC LIMIT $window
  UNION
  MATCH (p:Memory {tenant: $tenant, sessionId: m.sessionId})
  WHERE p.seq > m.seq AND p.tier IN $tiers AND ($userId IS NULL OR p.userId = $userId)
  RETURN p ORDER BY p.seq ASC LIMIT $window
}
WITH collect(m.id) AS anchors, collect(p) AS ms
RETURN anchors,
       [m IN ms | m.id + '\t' + coalesce(m.sessionId, '') + '\t' + coalesce(m.userId, '') + '\t' +
               toString(coalesce(m.seq, 0)) + '\t' + coalesce(m.type, '') + '\t' +
               coalesce(m.tier, '')] AS meta,
       [m IN ms | m.vectorBytes] AS vectors,
       [m IN ms WHERE m.vectorBytes IS NULL AND m.embedding IS NOT NULL | [m.id, m.embedding]]
         AS embeddings,
       [m IN ms | m.sentenceVectors] AS sentences
