// The memories a scope's cached copy must refresh (changed since the version it holds),
// as scope_rows_user returns them; ids no longer in the graph are simply absent.
UNWIND $ids AS id
MATCH (m:Memory {tenant: $tenant, id: id})
WITH collect(m) AS ms
RETURN [m IN ms | m.id] AS ids,
       [m IN ms | m.sessionId] AS sessions,
       [m IN ms | m.userId] AS users,
       [m IN ms | m.seq] AS seqs,
       [m IN ms | m.type] AS types,
       [m IN ms | m.tier] AS tiers,
       [m IN ms | m.vectorBytes] AS vectors,
       [m IN ms | CASE WHEN m.vectorBytes IS NULL THEN m.embedding END] AS embeddings,
       [m IN ms | m.sentenceVectors] AS sentences
