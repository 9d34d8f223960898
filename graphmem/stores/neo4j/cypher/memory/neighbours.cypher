// Conversational context for a search without its scope in memory: the $window turns
// just before and after each given memory in its session (by seq), inside the search's
// scope ($userId when it has one), with their vectors; one row of lists, `anchors`
// naming the memory each row is next to. Each side walks the (tenant, sessionId, seq)
// index outward from the memory and stops after $window rows: ordering by every
// property of the index lets the planner read it in order instead of sorting the
// session (3.7 against 6.4 ms for 20 memories of 100-turn sessions).
// The memories, their neighbours and the memories of $also (those leading the ranking
// so far) also come as items, as get_by_ids returns them: a search's results are nearly
// always among them, and reading them here saves the search its last round trip.
// Seen at the read's moment ($asOf, $validAt, $history: domain/moments.py, the
// same predicate in every read of memories at a moment; docs/concepts.md).
UNWIND $ids AS id
MATCH (m:Memory {tenant: $tenant, id: id})
CALL (m) {
  MATCH (p:Memory)
  WHERE p.tenant = $tenant AND p.sessionId = m.sessionId AND p.seq < m.seq
    AND p.tier IN $tiers AND ($userId IS NULL OR p.userId = $userId)
    AND ($history OR CASE WHEN $asOf IS NULL THEN p.retractedAt IS NULL
      ELSE (p.retractedAt IS NULL OR p.retractedAt > $asOf)
        AND none(i IN range(0, size(coalesce(p.restoredAt, [])) - 1)
                 WHERE p.pastRetractedAt[i] <= $asOf < p.restoredAt[i]) END)
    AND ($asOf IS NULL OR coalesce(p.recordedAt, p.createdAt) <= $asOf)
    AND ($validAt IS NULL OR p.createdAt <= $validAt)
  RETURN p ORDER BY p.tenant DESC, p.sessionId DESC, p.seq DESC LIMIT $window
  UNION
  MATCH (p:Memory)
  WHERE p.tenant = $tenant AND p.sessionId = m.sessionId AND p.seq > m.seq
    AND p.tier IN $tiers AND ($userId IS NULL OR p.userId = $userId)
    AND ($history OR CASE WHEN $asOf IS NULL THEN p.retractedAt IS NULL
      ELSE (p.retractedAt IS NULL OR p.retractedAt > $asOf)
        AND none(i IN range(0, size(coalesce(p.restoredAt, [])) - 1)
                 WHERE p.pastRetractedAt[i] <= $asOf < p.restoredAt[i]) END)
    AND ($asOf IS NULL OR coalesce(p.recordedAt, p.createdAt) <= $asOf)
    AND ($validAt IS NULL OR p.createdAt <= $validAt)
  RETURN p ORDER BY p.tenant, p.sessionId, p.seq LIMIT $window
}
WITH collect(m.id) AS anchors, collect(p) AS ms, collect(DISTINCT m) AS heads
CALL () {
  MATCH (x:Memory)
  WHERE x.tenant = $tenant AND x.id IN $also
  RETURN collect(x) AS extra
}
RETURN anchors,
       [m IN ms | m.id + '\t' + coalesce(m.sessionId, '') + '\t' + coalesce(m.userId, '') + '\t' +
               toString(coalesce(m.seq, 0)) + '\t' + coalesce(m.type, '') + '\t' +
               coalesce(m.tier, '') + '\t' +
               toString(CASE WHEN m.createdAt IS :: ZONED DATETIME
                             THEN m.createdAt.epochSeconds ELSE 0 END) + '\t' +
               coalesce(m.speaker, '')] AS meta,
       [m IN ms | m.vectorBytes] AS vectors,
       [m IN ms WHERE m.vectorBytes IS NULL AND m.embedding IS NOT NULL | [m.id, m.embedding]]
         AS embeddings,
       [m IN ms | m.sentenceVectors] AS sentences,
       [m IN heads + ms + extra | m {.id, .sessionId, .userId, .content, .type, .tier, .accessCount,
                             lastAccessedAt: toString(m.lastAccessedAt),
                             createdAt: toString(m.createdAt), recordedAt: toString(m.recordedAt),
                             retractedAt: toString(m.retractedAt), .retractReason,
                             .relevanceScore, .tokenCount,
                             .contentHash, .metadata, .seq}] AS items
