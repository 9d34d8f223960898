// A tombstone per erased subject ($kind: 'user', 'session' or 'memory'; one per memory
// id): from its commit on, memory/upsert_hot and memory/upsert_batch write no memory of
// the subject created at or before `at`. A second erasure of the subject moves `at`
// forward (never back) and renews the expiry. The Tenant node makes the tenant one that
// maintenance visits (admin/tenants), which removes the tombstone once it has expired,
// even for a tenant whose memories never reached the graph.
MERGE (:Tenant {id: $tenant})
WITH 1 AS one
UNWIND $subjects AS subject
MERGE (t:Tombstone {tenant: $tenant, kind: $kind, subject: subject})
  ON CREATE SET t.at = $at, t.expiresAt = $expiresAt
  ON MATCH SET t.at = CASE WHEN t.at < $at THEN $at ELSE t.at END,
               t.expiresAt = CASE WHEN t.expiresAt < $expiresAt THEN $expiresAt ELSE t.expiresAt END
RETURN count(t) AS tombstones
