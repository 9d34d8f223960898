// Migration: set vectorBytes on a batch of a tenant's memories (vector_bytes_missing).
UNWIND $rows AS row
MATCH (m:Memory {tenant: $tenant, id: row.id})
SET m.vectorBytes = row.vectorBytes
