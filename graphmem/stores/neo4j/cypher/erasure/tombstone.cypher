// A tombstone per erased subject ($kind: 'user', 'session' or 'memory'; one per memory
// id): from its commit on, memory/upsert_hot and memory/upsert_batch write no memory of
// the subject created at or before `at`. A second erasure of the subject moves `at`
// forward (never back) and renews the expiry.
UNWIND $subjects AS subject
MERGE (t:Tombstone {tenant: $tenant, kind: $kind, subject: subject})
  ON CREATE SET t.at = $at, t.expiresAt = $expiresAt
  ON MATCH SET t.at = CASE WHEN t.at < $at THEN $at ELSE t.at END,
               t.expiresAt = CASE WHEN t.expiresAt < $expiresAt THEN $expiresAt ELSE t.expiresAt END
RETURN count(t) AS tombstones
