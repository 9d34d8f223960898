// The nodes a tenant's vector writers lock, one of them each, and `graphmem reembed`'s
// flip all of them (reembed/flip): so that the flip waits for every writer that read
// the tenant's old model (memory/upsert_batch, memory/set_vectors).
CREATE CONSTRAINT model_stripe IF NOT EXISTS FOR (s:ModelStripe) REQUIRE (s.tenant, s.stripe) IS UNIQUE;
