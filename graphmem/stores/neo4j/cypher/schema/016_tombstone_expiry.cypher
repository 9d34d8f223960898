// Expired tombstones by expiry across tenants: which tenants the maintenance pass sweeps
// (admin/tombstone_tenants).
CREATE INDEX tombstone_expiry IF NOT EXISTS FOR (t:Tombstone) ON (t.expiresAt);
