// The tombstones of one subject kind among $subjects (how a test or an operator sees
// that an erasure left its mark).
UNWIND $subjects AS subject
MATCH (t:Tombstone {tenant: $tenant, kind: $kind, subject: subject})
RETURN t.subject AS subject, t.at AS at, t.expiresAt AS expiresAt
