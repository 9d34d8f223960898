// MCP search_nodes: entities whose name, type or an observation contains $query
// (lower-cased by the caller), by name, with the relations touching any of them.
MATCH (e:KGEntity {tenant: $tenant})
WHERE toLower(e.name) CONTAINS $query
   OR toLower(e.entityType) CONTAINS $query
   OR any(o IN e.observations WHERE toLower(o) CONTAINS $query)
WITH e
ORDER BY e.name
LIMIT $limit
WITH collect(e) AS found
CALL (found) {
  UNWIND found AS a
  MATCH (a)-[r:KG_RELATION]-(:KGEntity {tenant: $tenant})
  WITH DISTINCT r
  WITH startNode(r).name AS source, endNode(r).name AS target, r.relationType AS relationType
  ORDER BY source, target, relationType
  LIMIT $relationLimit
  RETURN collect({source: source, target: target, relationType: relationType}) AS relations
}
RETURN [e IN found | e {.name, .entityType, .observations}] AS entities, relations
