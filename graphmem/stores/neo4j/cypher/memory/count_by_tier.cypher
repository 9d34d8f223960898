// Warm and cold items and tokens of one session (memoryStatus).
MATCH (m:Memory {tenant: $tenant, sessionId: $sessionId})
WHERE m.tier IN ['warm', 'cold']
RETURN m.tier AS tier, count(m) AS items, coalesce(sum(m.tokenCount), 0) AS tokens
