// Conversational context: the turns just before and after each given memory in its
// session (by seq), with their cosine similarity to the query and their sentence vectors.
UNWIND $ids AS id
MATCH (m:Memory {tenant: $tenant, id: id})
CALL (m) {
  MATCH (p:Memory {tenant: $tenant, sessionId: m.sessionId})
  WHERE p.seq < m.seq AND p.tier IN $tiers
  RETURN p ORDER BY p.seq DESC LIMIT $window
  UNION
  MATCH (p:Memory {tenant: $tenant, sessionId: m.sessionId})
  WHERE p.seq > m.seq AND p.tier IN $tiers
  RETURN p ORDER BY p.seq ASC LIMIT $window
}
RETURN m.id AS of,
       p {.id, .sessionId, .userId, .content, .type, .tier, .accessCount, .lastAccessedAt,
          .createdAt, .relevanceScore, .tokenCount, .contentHash, .metadata, .seq} AS memory,
       2.0 * vector.similarity.cosine(p.embedding, $embedding) - 1.0 AS cosine,
       p.sentenceVectors AS vectors
