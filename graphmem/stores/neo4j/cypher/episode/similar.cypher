// Episode similarity (docs/concepts.md#episodes): cosine over episode embeddings, plus a boost for an exact
// structure-signature match. Episodes per tenant are few enough to rank exactly. The
// cosine is put on the relevance scale first ($floor maps to 0, $ceiling to 1: the
// embedder's, memory/search/relevance.py), the one the boost is written in; below the
// floor it goes negative, and such an episode does not vote (prior knowledge).
// Seen at the read's moment: the record-time and valid-time terms of the memories'
// predicate (memory/text_hits.cypher); an episode is never retracted, so $history
// changes nothing here.
// Only episodes embedded by $model (or before episodes recorded a model): a server
// still running a tenant's old model after `graphmem reembed` records its episodes with
// that model's vectors, which would rank as noise here until a reembed replaces them.
MATCH (e:Episode {tenant: $tenant})
WHERE e.embedding IS NOT NULL
  AND (e.embeddingModel IS NULL OR e.embeddingModel = $model)
  AND ($asOf IS NULL OR coalesce(e.recordedAt, e.createdAt) <= $asOf)
  AND ($validAt IS NULL OR e.createdAt <= $validAt)
WITH e, 2.0 * vector.similarity.cosine(e.embedding, $embedding) - 1.0 AS cosine,
     ($signature IS NOT NULL AND e.signature = $signature) AS signatureMatch
WITH e, cosine, signatureMatch,
     (cosine - $floor) / ($ceiling - $floor)
       + CASE WHEN signatureMatch THEN $boost ELSE 0.0 END AS similarity
ORDER BY similarity DESC, e.createdAt DESC
LIMIT $limit
RETURN e {.*, embedding: null} AS episode, cosine, signatureMatch, similarity
