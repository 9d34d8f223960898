// Retract memories: each stays in the graph, marked no longer held at $now with the
// caller's reason (a correction marks, it never deletes: reads at an earlier moment
// still see it; docs/concepts.md, "Corrections"). One already retracted keeps its first
// retraction. Returns where each memory lives (its scope views must change) and whether
// this call retracted it.
UNWIND $ids AS id
MATCH (m:Memory {tenant: $tenant, id: id})
WITH m, m.retractedAt IS NULL AS fresh
CALL (m, fresh) {
  WITH m, fresh WHERE fresh
  SET m.retractedAt = $now, m.retractReason = $reason
}
RETURN m.id AS id, m.sessionId AS sessionId, m.userId AS userId, fresh AS changed
