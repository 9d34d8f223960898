// Exact cosine ranking over one user's memories (a scope search has not in memory),
// found through the (tenant, userId) index; one row of lists, as vector_hits_index.
// Seen at the read's moment ($asOf, $validAt, $history: domain/moments.py, the
// same predicate in every read of memories at a moment; docs/concepts.md).
MATCH (m:Memory {tenant: $tenant, userId: $userId})
WHERE m.tier IN $tiers
  AND ($history OR CASE WHEN $asOf IS NULL THEN m.retractedAt IS NULL
    ELSE (m.retractedAt IS NULL OR m.retractedAt > $asOf)
      AND none(i IN range(0, size(coalesce(m.restoredAt, [])) - 1)
               WHERE m.pastRetractedAt[i] <= $asOf < m.restoredAt[i]) END)
  AND ($asOf IS NULL OR coalesce(m.recordedAt, m.createdAt) <= $asOf)
  AND ($validAt IS NULL OR m.createdAt <= $validAt)
  AND ($types IS NULL OR m.type IN $types)
  AND m.embedding IS NOT NULL
WITH m, vector.similarity.cosine(m.embedding, $embedding) AS score
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
