// Entities of the tenant whose resolution key ends in a normalised name (any type).
MATCH (e:Entity {tenant: $tenant})
WHERE e.key ENDS WITH ('|' + $norm) AND NOT (e)-[:SAME_AS]->()
RETURN e.key AS key
