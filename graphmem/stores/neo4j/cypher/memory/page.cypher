// One page of a scope's graph memories in conversation order (seq, then id), after a
// cursor. $needles, when given, keeps memories whose metadata JSON text (written with
// sorted keys and no spaces) contains one of them: a coarse filter the caller refines.
// Seen at the read's moment ($asOf, $validAt, $history: domain/moments.py).
MATCH (m:Memory {tenant: $tenant})
WHERE ($sessionId IS NULL OR m.sessionId = $sessionId)
  AND ($userId IS NULL OR m.userId = $userId)
  AND (coalesce(m.seq, 0) > $afterSeq OR (coalesce(m.seq, 0) = $afterSeq AND m.id > $afterId))
  AND ($needles IS NULL OR any(n IN $needles WHERE m.metadata CONTAINS n))
  AND ($history OR CASE WHEN $asOf IS NULL THEN m.retractedAt IS NULL
    ELSE (m.retractedAt IS NULL OR m.retractedAt > $asOf)
      AND none(i IN range(0, size(coalesce(m.restoredAt, [])) - 1)
               WHERE m.pastRetractedAt[i] <= $asOf < m.restoredAt[i]) END)
  AND ($asOf IS NULL OR coalesce(m.recordedAt, m.createdAt) <= $asOf)
  AND ($validAt IS NULL OR m.createdAt <= $validAt)
RETURN m {.id, .sessionId, .userId, .content, .type, .tier, .accessCount, .lastAccessedAt,
          .createdAt, .recordedAt, .retractedAt, .retractReason, .relevanceScore, .tokenCount, .contentHash, .metadata, .seq} AS memory
ORDER BY coalesce(m.seq, 0), m.id
LIMIT $first
