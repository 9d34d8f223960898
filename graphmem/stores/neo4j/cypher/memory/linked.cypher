// Graph expansion, recall's link step (retrieval.add_links): the memories of the search's
// scope that share an entity with one of $ids (the ranking's best so far), through
// MENTIONS and one SAME_AS merge either way. Only a rare entity links: one that at most
// $maxMentions memories of the scope mention, counted inside the scope so that what
// other users store does not decide it. An entity with more than $maxDegree mentions in
// the whole tenant is passed over before its mentions are walked: a cost bound (a hub
// such as the user's own name is never read), not a ranking signal. One row of lists,
// `anchors` naming the memory each row is linked from; with $vectors, each row's vectors
// (a search whose scope is in memory has them already). The label of a
// chat-formatted memory ("Nadia: ...") says who spoke, not what about: it links nothing.
// A mention that starts within the speaker's length of the text's start is the label (or
// part of it), after any leading whitespace up to that length; any other mention starts
// after the label and its colon.
// Seen at the read's moment ($asOf, $validAt, $history: domain/moments.py, the
// same predicate in every read of memories at a moment; docs/concepts.md).
UNWIND $ids AS id
MATCH (s:Memory {tenant: $tenant, id: id})-[r:MENTIONS]->(:Entity)-[:SAME_AS*0..1]-(e:Entity)
WHERE s.speaker IS NULL OR r.start > size(s.speaker)
WITH DISTINCT id, e
WHERE COUNT { (e)<-[:MENTIONS]-() } <= $maxDegree
CALL (e) {
  MATCH (m:Memory)-[r:MENTIONS]->(e)
  WHERE m.tenant = $tenant AND m.tier IN $tiers AND (m.speaker IS NULL OR r.start > size(m.speaker))
    AND ($history OR CASE WHEN $asOf IS NULL THEN m.retractedAt IS NULL
      ELSE (m.retractedAt IS NULL OR m.retractedAt > $asOf)
        AND none(i IN range(0, size(coalesce(m.restoredAt, [])) - 1)
                 WHERE m.pastRetractedAt[i] <= $asOf < m.restoredAt[i]) END)
    AND ($asOf IS NULL OR coalesce(m.recordedAt, m.createdAt) <= $asOf)
    AND ($validAt IS NULL OR m.createdAt <= $validAt)
    AND ($sessionId IS NULL OR m.sessionId = $sessionId)
    AND ($userId IS NULL OR m.userId = $userId)
  RETURN collect(m) AS ms
}
WITH id, ms
WHERE size(ms) <= $maxMentions
UNWIND ms AS m
WITH DISTINCT id, m
WHERE m.id <> id
WITH collect(id) AS anchors, collect(m) AS ms
RETURN anchors,
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
