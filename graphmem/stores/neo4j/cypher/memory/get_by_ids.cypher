// Fetch graph memories by id within the tenant, as one row of maps. Times come as ISO
// text: the driver's temporal values take most of a millisecond each to decode.
UNWIND $ids AS id
MATCH (m:Memory {tenant: $tenant, id: id})
RETURN collect(m {.id, .sessionId, .userId, .content, .type, .tier, .accessCount,
                  lastAccessedAt: toString(m.lastAccessedAt), createdAt: toString(m.createdAt),
                  recordedAt: toString(m.recordedAt), retractedAt: toString(m.retractedAt),
                  .retractReason,
                  .relevanceScore, .tokenCount, .contentHash, .metadata, .seq}) AS memories
