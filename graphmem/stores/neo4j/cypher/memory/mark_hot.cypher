// A promoted item now has a copy in the hot tier. The node stays as the durable copy
// (so a Redis loss cannot lose it) but leaves the warm/cold counts and graph search.
UNWIND $ids AS id
MATCH (m:Memory {tenant: $tenant, id: id})
SET m.tier = 'hot', m.promotedAt = $now
RETURN m.id AS id
