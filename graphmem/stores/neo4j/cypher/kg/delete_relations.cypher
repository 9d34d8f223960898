// MCP delete_relations: each (from, to, relationType) the tenant has; the rest ignored.
UNWIND $relations AS row
MATCH (:KGEntity {tenant: $tenant, name: row.source})
      -[r:KG_RELATION {relationType: row.relationType}]->
      (:KGEntity {tenant: $tenant, name: row.target})
DELETE r
RETURN count(*) AS deleted
