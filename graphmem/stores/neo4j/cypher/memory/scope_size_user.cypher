// How many graph memories a user holds, counted up to $cap (see scope_size_session).
MATCH (m:Memory {tenant: $tenant, userId: $userId})
WHERE m.tier IN $tiers
WITH m LIMIT $cap
RETURN count(m) AS n
