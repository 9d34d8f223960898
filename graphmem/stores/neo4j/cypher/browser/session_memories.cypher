// Browser guide: a session and its memories in the graph (warm and cold; a promoted
// memory's node shows tier 'hot'). Set :param tenant => 'dev', :param sessionId => 'demo'.
MATCH (s:Session {tenant: $tenant, id: $sessionId})-[r:HAS_MEMORY]->(m:Memory {tenant: $tenant})
RETURN s, r, m
ORDER BY m.tier, m.createdAt DESC
LIMIT 100
