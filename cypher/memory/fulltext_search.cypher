// BM25 ranking through the tenant's own fulltext index ($index), so term statistics are
// the tenant's. $lucene holds the query terms (escaped by the service) AND the scope
// tokens (session or user when asked), so ranking happens inside the scope; the WHERE
// re-checks it and applies tier and type.
CALL db.index.fulltext.queryNodes($index, $lucene, {limit: $k}) YIELD node AS m, score
WHERE m.tenant = $tenant
  AND ($sessionId IS NULL OR m.sessionId = $sessionId)
  AND ($userId IS NULL OR m.userId = $userId)
  AND m.tier IN $tiers
  AND ($types IS NULL OR m.type IN $types)
RETURN m {.id, .sessionId, .userId, .content, .type, .tier, .accessCount, .lastAccessedAt,
          .createdAt, .relevanceScore, .tokenCount, .contentHash, .metadata, .seq} AS memory,
       score
ORDER BY score DESC
LIMIT $limit
