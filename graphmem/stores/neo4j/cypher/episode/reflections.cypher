// Stored reflections, newest first, with the episodes they were derived from.
MATCH (r:Reflection {tenant: $tenant})
WHERE ($kind IS NULL OR r.kind = $kind) AND ($signature IS NULL OR r.signature = $signature)
RETURN r {.*, evidence: [(r)-[:DERIVED_FROM]->(e:Episode) | e.id]} AS reflection
ORDER BY r.updatedAt DESC
