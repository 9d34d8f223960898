// MCP read_graph: a page of the tenant's entities by name after $after, each with how
// many relations start at it (the caller ends the page before too many).
MATCH (e:KGEntity {tenant: $tenant})
WHERE $after IS NULL OR e.name > $after
WITH e
ORDER BY e.name
LIMIT $limit
RETURN e.name AS name, e.entityType AS entityType, e.observations AS observations,
       COUNT { (e)-[:KG_RELATION]->(:KGEntity {tenant: $tenant}) } AS degree
