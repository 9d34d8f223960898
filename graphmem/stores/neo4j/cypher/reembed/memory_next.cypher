// `graphmem reembed`, step 1: $model's vectors beside the memories' own, which search
// keeps using until the swap (reembed/memory_swap).
UNWIND $rows AS row
MATCH (m:Memory {tenant: $tenant, id: row.id})
SET m.embeddingNext = row.embedding,
    m.vectorBytesNext = row.vectorBytes,
    m.sentenceVectorsNext = row.sentenceVectors,
    m.nextModel = $model
RETURN count(m) AS written
