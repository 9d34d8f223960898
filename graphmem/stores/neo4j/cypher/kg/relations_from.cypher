// MCP read_graph: the relations that start at a page's entities.
UNWIND $names AS name
MATCH (a:KGEntity {tenant: $tenant, name: name})-[r:KG_RELATION]->(b:KGEntity {tenant: $tenant})
RETURN a.name AS source, b.name AS target, r.relationType AS relationType
ORDER BY source, target, relationType
LIMIT $limit
