// LangGraph store items (memory/kinds/items): one node per (tenant, namespace path, key).
// The uniqueness constraint is what makes a put one atomic MERGE: two puts of one key
// at once lock the same index entry, so one creates and the other updates.
CREATE CONSTRAINT store_item_key IF NOT EXISTS FOR (n:StoreItem) REQUIRE (n.tenant, n.path, n.key) IS UNIQUE;
// The prefix scans (tenant equal, path STARTS WITH: item/page, item/paths,
// item/vector_exact). The constraint's index cannot serve them: a composite index seeks a
// prefix only on its last property, and that is the key; without this one the planner
// scanned every tenant's items (46,000 on a test stack, for a page of 10).
CREATE INDEX store_item_tenant_path IF NOT EXISTS FOR (n:StoreItem) ON (n.tenant, n.path);
// Meaning search over a namespace prefix holding more items than search compares
// exactly (item/vector_exact's cap). $dimension comes from the configured embedder.
CREATE VECTOR INDEX store_item_embedding IF NOT EXISTS
FOR (n:StoreItem) ON n.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine'}};
