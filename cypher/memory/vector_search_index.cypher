// Approximate nearest neighbours through the vector index, filtered to the caller's scope.
// The index is shared by all tenants, so $k over-fetches and the WHERE keeps only this
// tenant's nodes; the service widens $k when the filter leaves too few.
CALL db.index.vector.queryNodes('memory_embedding', $k, $embedding) YIELD node AS m, score
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
