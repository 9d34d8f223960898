// MCP add_observations, all or nothing: adds to each entity the contents it does not
// hold yet. Writes nothing when an entity is not the tenant's (`missing`) or would
// hold more than $cap observations (`full`).
UNWIND $adds AS row
OPTIONAL MATCH (e:KGEntity {tenant: $tenant, name: row.name})
WITH collect({row: row, e: e}) AS rows
WITH rows,
     [x IN rows WHERE x.e IS NULL | x.row.name] AS missing,
     [x IN rows WHERE x.e IS NOT NULL
        AND size(x.e.observations)
            + size([c IN x.row.contents WHERE NOT c IN x.e.observations]) > $cap
      | x.row.name] AS full
CALL (rows, missing, full) {
  WITH rows, missing, full
  WHERE size(missing) = 0 AND size(full) = 0
  UNWIND rows AS x
  WITH x.e AS e, x.row AS row
  WITH e, row, [c IN row.contents WHERE NOT c IN e.observations] AS added
  SET e.observations = e.observations + added,
      e.updatedAt = CASE WHEN size(added) > 0 THEN $now ELSE e.updatedAt END
  RETURN collect({name: row.name, added: added}) AS added
}
RETURN missing, full, added
