// Browser guide: reflections and the episodes they were derived from.
MATCH evidence = (r:Reflection {tenant: $tenant})-[:DERIVED_FROM]->(e:Episode {tenant: $tenant})
OPTIONAL MATCH task = (e)-[:OF_TASK]->(:Task {tenant: $tenant})
RETURN evidence, task
LIMIT 100
