// The model whose vectors the tenant holds (memory/upsert_batch claims it with the first
// vectors; reembed/flip moves it): null for a tenant with no vectors yet.
OPTIONAL MATCH (t:Tenant {id: $tenant})
RETURN t.embeddingModel AS model, t.embeddingDimensions AS dimensions
