// BM25 through the tenant's own fulltext index ($index), as one row of lists. $lucene
// holds the query terms and the scope's tokens, so ranking happens inside the scope;
// the WHERE re-checks it and applies tier and type. With $vectors, each hit's vectors
// come along (a search without the scope in memory computes their cosines itself).
CALL db.index.fulltext.queryNodes($index, $lucene, {limit: $k}) YIELD node AS m, score
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
       [m IN ms | m.id] AS ids,
       [m IN ms | m.sessionId] AS sessions,
       [m IN ms | m.userId] AS users,
       [m IN ms | m.seq] AS seqs,
       [m IN ms | m.type] AS types,
       [m IN ms | m.tier] AS tiers,
       [m IN ms | CASE WHEN $vectors THEN m.vectorBytes END] AS vectors,
       [m IN ms | CASE WHEN $vectors AND m.vectorBytes IS NULL THEN m.embedding END]
         AS embeddings,
       [m IN ms | CASE WHEN $vectors THEN m.sentenceVectors END] AS sentences
