// Exact cosine ranking over one session (optionally one user's part of it): perfect
// recall, found through the (tenant, sessionId, tier) index.
MATCH (m:Memory {tenant: $tenant, sessionId: $sessionId})
WHERE m.tier IN $tiers
  AND ($userId IS NULL OR m.userId = $userId)
  AND ($types IS NULL OR m.type IN $types)
  AND m.embedding IS NOT NULL
WITH m, vector.similarity.cosine(m.embedding, $embedding) AS score
ORDER BY score DESC
LIMIT $limit
RETURN m {.id, .sessionId, .userId, .content, .type, .tier, .accessCount, .lastAccessedAt,
          .createdAt, .relevanceScore, .tokenCount, .contentHash, .metadata, .seq} AS memory,
       score
