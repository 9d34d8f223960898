// Store an agent's persona: role, tone, expertise and constraints.
MERGE (p:Persona {tenant: $tenant, agentId: $agentId})
SET p.role = $role, p.tone = $tone, p.expertise = $expertise, p.constraints = $constraints,
    p.updatedAt = $now
RETURN p {.*} AS persona
