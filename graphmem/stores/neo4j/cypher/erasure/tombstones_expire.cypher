// Tombstones past their expiry (GRAPHMEM_TOMBSTONE_DAYS after the erasure), a batch at a
// time: by then no job, spill or cache can still hold what they guard against.
MATCH (t:Tombstone {tenant: $tenant})
WHERE t.expiresAt < $now
WITH t LIMIT $limit
DELETE t
RETURN count(*) AS expired
