// Exact cosine ranking over one user's memories, found through the (tenant, userId)
// index: perfect recall, and no dependence on how many others share the vector index.
MATCH (m:Memory {tenant: $tenant, userId: $userId})
WHERE m.tier IN $tiers
  AND ($types IS NULL OR m.type IN $types)
  AND m.embedding IS NOT NULL
WITH m, vector.similarity.cosine(m.embedding, $embedding) AS score
ORDER BY score DESC
LIMIT $limit
RETURN m {.id, .sessionId, .userId, .content, .type, .tier, .accessCount, .lastAccessedAt,
          .createdAt, .relevanceScore, .tokenCount, .contentHash, .metadata, .seq} AS memory,
       score
