// What search keeps in memory about one session's memories (see scope_rows_user).
MATCH (m:Memory {tenant: $tenant, sessionId: $sessionId})
WITH m LIMIT $cap
WITH collect(m) AS ms
WITH size(ms) AS n, CASE WHEN size(ms) < $cap THEN ms ELSE [] END AS ms
RETURN n,
       [m IN ms | m.id] AS ids,
       [m IN ms | m.sessionId] AS sessions,
       [m IN ms | m.userId] AS users,
       [m IN ms | m.seq] AS seqs,
       [m IN ms | m.type] AS types,
       [m IN ms | m.tier] AS tiers,
       [m IN ms | m.vectorBytes] AS vectors,
       [m IN ms | CASE WHEN m.vectorBytes IS NULL THEN m.embedding END] AS embeddings,
       [m IN ms | m.sentenceVectors] AS sentences
