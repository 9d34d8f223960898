// Undo retractions: each memory is held again from $now. The retraction is kept as a
// span (pastRetractedAt[i] to restoredAt[i], with its reason) so that a read at a moment
// inside it still leaves the memory out (the predicate of memory/text_hits).
UNWIND $ids AS id
MATCH (m:Memory {tenant: $tenant, id: id})
WITH m, m.retractedAt IS NOT NULL AS fresh
CALL (m, fresh) {
  WITH m, fresh WHERE fresh
  SET m.pastRetractedAt = coalesce(m.pastRetractedAt, []) + m.retractedAt,
      m.restoredAt = coalesce(m.restoredAt, []) + $now,
      m.pastRetractReasons = coalesce(m.pastRetractReasons, []) + coalesce(m.retractReason, ''),
      m.retractedAt = null,
      m.retractReason = null
}
RETURN m.id AS id, m.sessionId AS sessionId, m.userId AS userId, fresh AS changed
