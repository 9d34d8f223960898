// BM25 ranking through the fulltext index. $lucene holds the query terms (escaped by
// the service) AND the tenant's scope token, so ranking happens inside the tenant.
CALL db.index.fulltext.queryNodes('memory_fulltext', $lucene, {limit: $k}) YIELD node AS m, score
WHERE m.tenant = $tenant
  AND ($sessionId IS NULL OR m.sessionId = $sessionId)
  AND ($userId IS NULL OR m.userId = $userId)
  AND m.tier IN $tiers
  AND ($types IS NULL OR m.type IN $types)
RETURN m {.id, .sessionId, .userId, .content, .type, .tier, .accessCount, .lastAccessedAt,
          .createdAt, .relevanceScore, .tokenCount, .contentHash, .metadata, .seq} AS memory,
       score,
       CASE WHEN m.embedding IS NULL THEN 0.0
            ELSE 2.0 * vector.similarity.cosine(m.embedding, $embedding) - 1.0 END AS cosine
ORDER BY score DESC
LIMIT $limit
