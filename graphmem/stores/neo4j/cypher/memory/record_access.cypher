// Recall bookkeeping: count the access, average the relevance with the new
// score, and warm up a cold item once it has been accessed often enough. Returns the
// items as they are now (a memory deleted meanwhile is not among them), each with the
// tier it had before (`was`), as one row of maps; times as ISO text (the driver's
// temporal values are slow to decode).
UNWIND $hits AS hit
MATCH (m:Memory {tenant: $tenant, id: hit.id})
WITH m, hit, m.tier AS was
SET m.accessCount = coalesce(m.accessCount, 0) + 1,
    m.lastAccessedAt = $now,
    m.relevanceScore = (coalesce(m.relevanceScore, 0.5) + hit.score) / 2.0
SET m.tier = CASE
    WHEN m.tier = 'cold' AND m.accessCount > $warmAccessThreshold THEN 'warm'
    ELSE m.tier END
RETURN collect(m {.id, .sessionId, .userId, .content, .type, .tier, .accessCount,
                  lastAccessedAt: toString(m.lastAccessedAt), createdAt: toString(m.createdAt),
                  recordedAt: toString(m.recordedAt), retractedAt: toString(m.retractedAt),
                  .retractReason,
                  .relevanceScore, .tokenCount, .contentHash, .metadata, .seq,
                  was: was}) AS memories
