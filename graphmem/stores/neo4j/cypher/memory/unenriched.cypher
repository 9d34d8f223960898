// Memories of an enrichment job that left the hot tier before the worker reached them:
// a spill wrote them without vectors and left those to the job (memory/writepath/enrichment.py).
// The same row shape as memory/get_by_ids.
UNWIND $ids AS id
MATCH (m:Memory {tenant: $tenant, id: id})
WHERE m.vectorBytes IS NULL
RETURN collect(m {.id, .sessionId, .userId, .content, .type, .tier, .accessCount,
                  lastAccessedAt: toString(m.lastAccessedAt), createdAt: toString(m.createdAt),
                  recordedAt: toString(m.recordedAt), retractedAt: toString(m.retractedAt),
                  .retractReason,
                  .relevanceScore, .tokenCount, .contentHash, .metadata, .seq}) AS memories
