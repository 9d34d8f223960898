// BM25 through the tenant's own fulltext index ($index), as one row of lists. $lucene
// holds the query terms and the scope's tokens, so ranking happens inside the scope;
// the WHERE re-checks it and applies tier and type. With $vectors, each hit's vectors
// come along (a search without the scope in memory computes their cosines itself).
// Lucene breaks ties in score by its internal document order, which depends on the
// order memories were written: over-fetching ($k is twice $limit) and ordering ties by
// conversation order makes the cut the same for the same memories written in another
// order (an import into another tenant ranks as the original did).
// Seen at the read's moment ($asOf, $validAt, $history: domain/moments.py, the
// same predicate in every read of memories at a moment; docs/concepts.md).
CALL db.index.fulltext.queryNodes($index, $lucene, {limit: $k}) YIELD node AS m, score
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
ORDER BY score DESC, m.createdAt, m.seq
LIMIT $limit
WITH collect(m) AS ms, collect(score) AS scores
RETURN scores,
       [m IN ms | m.id + '\t' + coalesce(m.sessionId, '') + '\t' + coalesce(m.userId, '') + '\t' +
               toString(coalesce(m.seq, 0)) + '\t' + coalesce(m.type, '') + '\t' +
               coalesce(m.tier, '') + '\t' +
               toString(CASE WHEN m.createdAt IS :: ZONED DATETIME
                             THEN m.createdAt.epochSeconds ELSE 0 END) + '\t' +
               coalesce(m.speaker, '')] AS meta,
       CASE WHEN $vectors THEN [m IN ms | m.vectorBytes] ELSE [] END AS vectors,
       [m IN ms WHERE $vectors AND m.vectorBytes IS NULL AND m.embedding IS NOT NULL |
        [m.id, m.embedding]] AS embeddings,
       CASE WHEN $vectors THEN [m IN ms | m.sentenceVectors] ELSE [] END AS sentences
