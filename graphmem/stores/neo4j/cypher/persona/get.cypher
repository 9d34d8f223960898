// An agent's stored persona (set through the API; configured personas are the fallback).
MATCH (p:Persona {tenant: $tenant, agentId: $agentId})
RETURN p {.*} AS persona
