// MCP create_relations, all or nothing: when an end of any relation is not an entity
// of the tenant, nothing is written and `missing` names the absent ends. A relation is
// new on (from, to, relationType); `createdIn` marks what this call created.
UNWIND $relations AS row
OPTIONAL MATCH (a:KGEntity {tenant: $tenant, name: row.source})
OPTIONAL MATCH (b:KGEntity {tenant: $tenant, name: row.target})
WITH collect({row: row, a: a, b: b}) AS rows
WITH rows,
     [x IN rows WHERE x.a IS NULL | x.row.source] + [x IN rows WHERE x.b IS NULL | x.row.target] AS missing
CALL (rows, missing) {
  WITH rows, missing
  WHERE size(missing) = 0
  UNWIND rows AS x
  WITH x.a AS a, x.b AS b, x.row AS row
  MERGE (a)-[r:KG_RELATION {relationType: row.relationType}]->(b)
    ON CREATE SET r.tenant = $tenant, r.createdAt = $now, r.createdIn = $callId
  WITH a, b, r
  WHERE r.createdIn = $callId
  RETURN collect({source: a.name, target: b.name, relationType: r.relationType}) AS created
}
RETURN missing, created
