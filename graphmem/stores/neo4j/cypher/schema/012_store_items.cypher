// LangGraph store items (memory/kinds/items): one node per (tenant, namespace path, key).
// The uniqueness constraint is what makes a put one atomic MERGE: two puts of one key
// at once lock the same index entry, so one creates and the other updates. Its backing
// index also serves the prefix scans (tenant equal, path STARTS WITH).
CREATE CONSTRAINT store_item_key IF NOT EXISTS FOR (n:StoreItem) REQUIRE (n.tenant, n.path, n.key) IS UNIQUE;
// Meaning search over a namespace prefix holding more items than search compares
// exactly (item/vector_exact's cap). $dimension comes from the configured embedder.
CREATE VECTOR INDEX store_item_embedding IF NOT EXISTS
FOR (n:StoreItem) ON n.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine'}};
