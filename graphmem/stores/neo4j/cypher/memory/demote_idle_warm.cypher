// Demotion policy (the builder's extension point): warm memories nobody recalled since
// $before become cold. Returns the demoted ids.
MATCH (m:Memory {tenant: $tenant, tier: 'warm'})
WHERE m.lastAccessedAt < $before
SET m.tier = 'cold', m.demotedAt = $now
RETURN m.id AS id
