// The memories a scope's copy in memory must read again (changed since the version it
// holds), as scope_rows_user returns them; ids no longer in the graph are absent.
UNWIND $ids AS id
MATCH (m:Memory {tenant: $tenant, id: id})
// a retracted memory leaves the scope's view as a deleted one would
WHERE m.retractedAt IS NULL
WITH collect(m) AS ms
RETURN [m IN ms | m.id + '\t' + coalesce(m.sessionId, '') + '\t' + coalesce(m.userId, '') + '\t' +
               toString(coalesce(m.seq, 0)) + '\t' + coalesce(m.type, '') + '\t' +
               coalesce(m.tier, '') + '\t' +
               toString(CASE WHEN m.createdAt IS :: ZONED DATETIME
                             THEN m.createdAt.epochSeconds ELSE 0 END) + '\t' +
               coalesce(m.speaker, '')] AS meta,
       [m IN ms | m.vectorBytes] AS vectors,
       [m IN ms WHERE m.vectorBytes IS NULL AND m.embedding IS NOT NULL | [m.id, m.embedding]]
         AS embeddings,
       [m IN ms | m.sentenceVectors] AS sentences,
       [m IN ms | CASE WHEN m.termVersion = $termVersion THEN m.termBytes END] AS terms
