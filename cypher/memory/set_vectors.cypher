// The vectors of memories written behind (memory/upsert_hot), once embedded. MATCH, not
// MERGE: a memory forgotten while it was being embedded stays forgotten.
UNWIND $rows AS row
MATCH (m:Memory {tenant: $tenant, id: row.id})
SET m.sentenceVectors = row.sentenceVectors,
    m.vectorBytes = row.vectorBytes
WITH m, row
CALL db.create.setNodeVectorProperty(m, 'embedding', row.embedding)
RETURN m.id AS id
