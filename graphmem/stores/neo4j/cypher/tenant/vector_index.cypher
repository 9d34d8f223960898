// A vector index of the tenant's own, for a tenant large enough that the shared index
// (memory_embedding) would make its tenant-wide searches wade through other tenants'
// neighbours (docs/recall.md#tenant-scope). Over the tenant's label, the same one its
// fulltext index covers. __INDEX__ and __LABEL__ are names derived from a hex hash of
// the tenant id (models.tenant_vector_index), checked against [A-Za-z0-9_] before use.
CREATE VECTOR INDEX __INDEX__ IF NOT EXISTS
FOR (m:__LABEL__) ON m.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine'}}
