// The audit log of erasures is append-only: a receipt is created once and no statement
// in this library sets, removes or deletes an :ErasureReceipt (tests/unit/repo checks).
// An import of a receipt the log holds already creates nothing.
OPTIONAL MATCH (old:ErasureReceipt {tenant: $tenant, id: $id})
WITH old
WHERE old IS NULL
CREATE (r:ErasureReceipt {tenant: $tenant, id: $id, at: $at, kind: $kind,
                          userId: $userId, sessionId: $sessionId, document: $document,
                          storedAt: datetime(), imported: $imported})
RETURN r.id AS id
