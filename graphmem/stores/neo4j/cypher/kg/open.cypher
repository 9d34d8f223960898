// MCP open_nodes: the named entities of the tenant (in the order asked), with the
// relations touching any of them.
UNWIND range(0, size($names) - 1) AS i
MATCH (e:KGEntity {tenant: $tenant, name: $names[i]})
WITH e, i
ORDER BY i
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
