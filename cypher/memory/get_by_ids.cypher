// Fetch graph memories by id within the tenant.
UNWIND $ids AS id
MATCH (m:Memory {tenant: $tenant, id: id})
RETURN m {.id, .sessionId, .userId, .content, .type, .tier, .accessCount, .lastAccessedAt,
          .createdAt, .relevanceScore, .tokenCount, .contentHash, .metadata, .seq} AS memory
