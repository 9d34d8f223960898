// What fusion needs about candidates: the cosine of those BM25 alone found
// ($cosineIds; vector hits come with theirs) and every candidate's packed sentence
// vectors (float16 bytes), so a memory of several sentences ranks by its best one.
UNWIND $ids AS id
MATCH (m:Memory {tenant: $tenant, id: id})
RETURN m.id AS id,
       CASE WHEN id IN $cosineIds AND m.embedding IS NOT NULL
            THEN 2.0 * vector.similarity.cosine(m.embedding, $embedding) - 1.0 END AS cosine,
       m.sentenceVectors AS vectors
