// Exact cosine ranking over one session (optionally one user's part of it), found
// through the (tenant, sessionId, tier) index; one row of lists, as vector_hits_index.
MATCH (m:Memory {tenant: $tenant, sessionId: $sessionId})
WHERE m.tier IN $tiers
  AND ($userId IS NULL OR m.userId = $userId)
  AND ($types IS NULL OR m.type IN $types)
  AND m.embedding IS NOT NULL
WITH m, vector.similarity.cosine(m.embedding, $embedding) AS score
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
       [m IN ms | m.sentenceVectors] AS sentences
