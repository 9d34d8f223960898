// `graphmem reembed`, step 3: a batch of memories whose next vectors are $model's take
// them as their own (found through memory_next_model, schema/010_reembed).
MATCH (m:Memory {tenant: $tenant})
WHERE m.nextModel = $model
WITH m LIMIT $batch
SET m.vectorBytes = m.vectorBytesNext,
    m.sentenceVectors = m.sentenceVectorsNext,
    m.embeddingModel = $model
WITH m
CALL db.create.setNodeVectorProperty(m, 'embedding', m.embeddingNext)
REMOVE m.embeddingNext, m.vectorBytesNext, m.sentenceVectorsNext, m.nextModel
RETURN count(m) AS swapped
