// Approximate nearest neighbours through a vector index ($index: the shared one, or the
// tenant's own once it has one), filtered to the caller's scope, as one row of lists
// with each hit's sentence vectors. The shared index holds every tenant, so $k
// over-fetches and the service widens it when the filter leaves too few. Scores are the
// index's (1 + cosine) / 2.
CALL db.index.vector.queryNodes($index, $k, $embedding) YIELD node AS m, score
WHERE m.tenant = $tenant
  AND ($sessionId IS NULL OR m.sessionId = $sessionId)
  AND ($userId IS NULL OR m.userId = $userId)
  AND m.tier IN $tiers
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
