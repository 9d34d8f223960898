// Tenants holding tombstones past their lifetime (ids only), for the maintenance pass to
// sweep (erasure/tombstones_expire, scoped by tenant): one index seek a pass, instead of a
// write for every tenant. Its own index (schema/016_tombstone_expiry) orders by expiry.
MATCH (t:Tombstone)
WHERE t.expiresAt < $now
RETURN DISTINCT t.tenant AS tenant
LIMIT $limit
