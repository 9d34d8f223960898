// Recall bookkeeping: count the access, average the relevance with the new
// score, and warm up a cold item once it has been accessed often enough.
UNWIND $hits AS hit
MATCH (m:Memory {tenant: $tenant, id: hit.id})
SET m.accessCount = coalesce(m.accessCount, 0) + 1,
    m.lastAccessedAt = $now,
    m.relevanceScore = (coalesce(m.relevanceScore, 0.5) + hit.score) / 2.0
SET m.tier = CASE
    WHEN m.tier = 'cold' AND m.accessCount > $warmAccessThreshold THEN 'warm'
    ELSE m.tier END
RETURN m {.id, .sessionId, .userId, .content, .type, .tier, .accessCount, .lastAccessedAt,
          .createdAt, .relevanceScore, .tokenCount, .contentHash, .metadata, .seq} AS memory
