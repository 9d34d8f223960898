// One page of a scope's graph memories in conversation order (seq, then id), after a
// cursor. $needles, when given, keeps memories whose metadata JSON text (written with
// sorted keys and no spaces) contains one of them: a coarse filter the caller refines.
MATCH (m:Memory {tenant: $tenant})
WHERE ($sessionId IS NULL OR m.sessionId = $sessionId)
  AND ($userId IS NULL OR m.userId = $userId)
  AND (coalesce(m.seq, 0) > $afterSeq OR (coalesce(m.seq, 0) = $afterSeq AND m.id > $afterId))
  AND ($needles IS NULL OR any(n IN $needles WHERE m.metadata CONTAINS n))
RETURN m {.id, .sessionId, .userId, .content, .type, .tier, .accessCount, .lastAccessedAt,
          .createdAt, .relevanceScore, .tokenCount, .contentHash, .metadata, .seq} AS memory
ORDER BY coalesce(m.seq, 0), m.id
LIMIT $first
