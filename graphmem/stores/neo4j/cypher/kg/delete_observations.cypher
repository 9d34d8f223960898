// MCP delete_observations: removes the given contents from each named entity; absent
// entities and contents are ignored.
UNWIND $deletions AS row
MATCH (e:KGEntity {tenant: $tenant, name: row.name})
WITH e, [o IN e.observations WHERE NOT o IN row.contents] AS kept
SET e.updatedAt = CASE WHEN size(kept) < size(e.observations) THEN $now ELSE e.updatedAt END,
    e.observations = kept
RETURN count(*) AS touched
