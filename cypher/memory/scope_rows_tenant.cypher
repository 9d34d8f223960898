// What search keeps in memory about a whole tenant's memories, for tenants small enough
// (see scope_rows_user).
MATCH (m:Memory {tenant: $tenant})
WITH m LIMIT $cap
WITH collect(m) AS ms
WITH size(ms) AS n, CASE WHEN size(ms) < $cap THEN ms ELSE [] END AS ms
RETURN n,
       [m IN ms | m.id + '\t' + coalesce(m.sessionId, '') + '\t' + coalesce(m.userId, '') + '\t' +
               toString(coalesce(m.seq, 0)) + '\t' + coalesce(m.type, '') + '\t' +
               coalesce(m.tier, '')] AS meta,
       [m IN ms | m.vectorBytes] AS vectors,
       [m IN ms WHERE m.vectorBytes IS NULL AND m.embedding IS NOT NULL | [m.id, m.embedding]]
         AS embeddings,
       [m IN ms | m.sentenceVectors] AS sentences
