// The memories a scope's copy in memory must read again (changed since the version it
// holds), as scope_rows_user returns them; ids no longer in the graph are absent
// (a retracted memory stays, with its retraction).
UNWIND $ids AS id
MATCH (m:Memory {tenant: $tenant, id: id})
WITH collect(m) AS ms
RETURN [m IN ms | m.id + '\t' + coalesce(m.sessionId, '') + '\t' + coalesce(m.userId, '') + '\t' +
               toString(coalesce(m.seq, 0)) + '\t' + coalesce(m.type, '') + '\t' +
               coalesce(m.tier, '') + '\t' +
               toString(CASE WHEN m.createdAt IS :: ZONED DATETIME
                             THEN m.createdAt.epochSeconds ELSE 0 END) + '\t' +
               coalesce(m.speaker, '') + '\t' +
               coalesce(toString(CASE WHEN coalesce(m.recordedAt, m.createdAt) IS :: ZONED DATETIME
                 THEN coalesce(m.recordedAt, m.createdAt).epochSeconds * 1000000 +
                      (coalesce(m.recordedAt, m.createdAt).nanosecond + 999) / 1000 END), '') + '\t' +
               coalesce(toString(CASE WHEN m.createdAt IS :: ZONED DATETIME
                 THEN m.createdAt.epochSeconds * 1000000 + (m.createdAt.nanosecond + 999) / 1000 END), '') + '\t' +
               CASE WHEN m.retractedAt IS NULL THEN ''
                    WHEN m.retractedAt IS :: ZONED DATETIME
                    THEN toString(m.retractedAt.epochSeconds * 1000000 +
                                  (m.retractedAt.nanosecond + 999) / 1000)
                    ELSE 'x' END] AS meta,
       [m IN ms WHERE m.restoredAt IS NOT NULL |
        [m.id, [t IN m.pastRetractedAt | t.epochSeconds * 1000000 + (t.nanosecond + 999) / 1000],
               [t IN m.restoredAt | t.epochSeconds * 1000000 + (t.nanosecond + 999) / 1000]]] AS spans,
       [m IN ms | m.vectorBytes] AS vectors,
       [m IN ms WHERE m.vectorBytes IS NULL AND m.embedding IS NOT NULL | [m.id, m.embedding]]
         AS embeddings,
       [m IN ms | m.sentenceVectors] AS sentences,
       [m IN ms | CASE WHEN m.termVersion = $termVersion THEN m.termBytes END] AS terms
