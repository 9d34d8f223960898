// The packed sentence vectors (float16 bytes) of candidate memories, for ranking a
// memory of several sentences by its best sentence.
UNWIND $ids AS id
MATCH (m:Memory {tenant: $tenant, id: id})
WHERE m.sentenceVectors IS NOT NULL
RETURN m.id AS id, m.sentenceVectors AS vectors
