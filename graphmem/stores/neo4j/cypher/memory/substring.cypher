// Substring search: memories whose content contains the text (any case).
MATCH (m:Memory {tenant: $tenant})
WHERE m.retractedAt IS NULL
  AND ($sessionId IS NULL OR m.sessionId = $sessionId)
  AND ($userId IS NULL OR m.userId = $userId)
  AND m.tier IN ['warm', 'cold']
  AND toLower(m.content) CONTAINS $needle
RETURN m {.id, .sessionId, .userId, .content, .type, .tier, .accessCount, .lastAccessedAt,
          .createdAt, .recordedAt, .retractedAt, .retractReason, .relevanceScore, .tokenCount, .contentHash, .metadata, .seq} AS memory
ORDER BY m.createdAt DESC, m.seq DESC
LIMIT $limit
