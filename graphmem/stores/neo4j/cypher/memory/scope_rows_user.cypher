// Everything search keeps in memory about one user's memories (memory/search/scopecache.py):
// each memory's id, place in its conversation, type, tier and vectors, as one row of
// lists, a page at a time (the driver decodes one row of lists many times faster than a row
// per memory).
// Vectors are float32 bytes (vectorBytes); the embedding list only where a memory
// written before vectorBytes existed lacks them. Every tier: search masks by tier.
// terms: the hashes of each memory's stems (BM25 inside the scope), null where they were
// computed by another analysis version than $termVersion (Memory.backfill_terms computes them again).
// Retracted memories too, with the two clocks (record time, valid time, retraction, in
// microseconds rounded up, and past retraction spans): a read at a moment masks the view
// with the predicate of memory/text_hits (memory/search/scopeclocks.py), a current read
// leaves the retracted out.
// At most $cap memories: a larger scope is not cached, and n = $cap tells so.
MATCH (m:Memory {tenant: $tenant, userId: $userId})
WITH m LIMIT $cap
WITH collect(m) AS ms
WITH size(ms) AS n, CASE WHEN size(ms) < $cap THEN ms ELSE [] END AS ms
// $page memories a row: the driver keeps each connection's receive buffer at the size
// of the largest message it ever received, so one row of a whole scope would pin
// megabytes per pooled connection for good
UNWIND range(0, CASE WHEN size(ms) = 0 THEN 0 ELSE size(ms) - 1 END, $page) AS at
WITH n, ms[at..at + $page] AS ms
RETURN n,
       [m IN ms | m.id + '\t' + coalesce(m.sessionId, '') + '\t' + coalesce(m.userId, '') + '\t' +
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
