// Migration: a tenant's embedded memories written before vectorBytes existed (the
// float32 bytes of the embedding that search reads into memory).
MATCH (m:Memory {tenant: $tenant})
WHERE m.embedding IS NOT NULL AND m.vectorBytes IS NULL
RETURN m.id AS id, m.embedding AS embedding
LIMIT $batch
