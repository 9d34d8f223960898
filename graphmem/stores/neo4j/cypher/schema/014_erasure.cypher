// Erasure (docs/concepts.md#erasure): one tombstone per erased subject, looked up by every
// write of a memory (memory/upsert_hot, memory/upsert_batch), and receipts, one per id.
CREATE CONSTRAINT tombstone_subject IF NOT EXISTS FOR (t:Tombstone) REQUIRE (t.tenant, t.kind, t.subject) IS UNIQUE;
CREATE CONSTRAINT erasure_receipt_id IF NOT EXISTS FOR (r:ErasureReceipt) REQUIRE (r.tenant, r.id) IS UNIQUE;
CREATE INDEX erasure_receipt_at IF NOT EXISTS FOR (r:ErasureReceipt) ON (r.tenant, r.at);
CREATE INDEX tombstone_expires IF NOT EXISTS FOR (t:Tombstone) ON (t.tenant, t.expiresAt);
