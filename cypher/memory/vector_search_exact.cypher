// Exact cosine ranking over a small scope (one session or user): perfect recall, and no
// dependence on how many other tenants share the vector index.
MATCH (m:Memory {tenant: $tenant})
WHERE ($sessionId IS NULL OR m.sessionId = $sessionId)
  AND ($userId IS NULL OR m.userId = $userId)
  AND m.tier IN $tiers
  AND ($types IS NULL OR m.type IN $types)
  AND m.embedding IS NOT NULL
WITH m, vector.similarity.cosine(m.embedding, $embedding) AS score
ORDER BY score DESC
LIMIT $limit
RETURN m {.id, .sessionId, .userId, .content, .type, .tier, .accessCount, .lastAccessedAt,
          .createdAt, .relevanceScore, .tokenCount, .contentHash, .metadata, .seq} AS memory,
       score
