// mergeKnowledgeGraph, before it writes: which of $names are entities of the tenant
// (a relation to any other name is NOT_FOUND, and the merge writes nothing).
UNWIND $names AS name
MATCH (e:KGEntity {tenant: $tenant, name: name})
RETURN collect(e.name) AS names
