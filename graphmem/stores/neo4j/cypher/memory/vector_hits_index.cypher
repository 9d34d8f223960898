// Approximate nearest neighbours through a vector index ($index: the shared one, or the
// tenant's own once it has one), filtered to the caller's scope, as one row of lists
// with each hit's sentence vectors. The shared index holds every tenant, so $k
// over-fetches and the service widens it when the filter leaves too few. Scores are the
// index's (1 + cosine) / 2.
// Seen at the read's moment ($asOf, $validAt, $history: domain/moments.py, the
// same predicate in every read of memories at a moment; docs/concepts.md).
CALL db.index.vector.queryNodes($index, $k, $embedding) YIELD node AS m, score
WHERE m.tenant = $tenant
  AND ($sessionId IS NULL OR m.sessionId = $sessionId)
  AND ($userId IS NULL OR m.userId = $userId)
  AND m.tier IN $tiers
  AND ($history OR CASE WHEN $asOf IS NULL THEN m.retractedAt IS NULL
    ELSE (m.retractedAt IS NULL OR m.retractedAt > $asOf)
      AND none(i IN range(0, size(coalesce(m.restoredAt, [])) - 1)
               WHERE m.pastRetractedAt[i] <= $asOf < m.restoredAt[i]) END)
  AND ($asOf IS NULL OR coalesce(m.recordedAt, m.createdAt) <= $asOf)
  AND ($validAt IS NULL OR m.createdAt <= $validAt)
  AND ($types IS NULL OR m.type IN $types)
WITH m, score
ORDER BY score DESC
LIMIT $limit
WITH collect(m) AS ms, collect(score) AS scores
RETURN scores,
       [m IN ms | m.id + '\t' + coalesce(m.sessionId, '') + '\t' + coalesce(m.userId, '') + '\t' +
               toString(coalesce(m.seq, 0)) + '\t' + coalesce(m.type, '') + '\t' +
               coalesce(m.tier, '') + '\t' +
               toString(CASE WHEN m.createdAt IS :: ZONED DATETIME
                             THEN m.createdAt.epochSeconds ELSE 0 END) + '\t' +
               coalesce(m.speaker, '')] AS meta,
       [m IN ms | m.sentenceVectors] AS sentences
