// Session ids holding at least one graph memory, in id order after a cursor, optionally
// only those starting with $prefix or belonging to $userId.
MATCH (s:Session {tenant: $tenant})
WHERE s.id STARTS WITH $prefix
  AND s.id > $after
  AND EXISTS { (s)-[:HAS_MEMORY]->(:Memory) }
  AND ($userId IS NULL OR EXISTS { (:User {tenant: $tenant, id: $userId})-[:HAS_SESSION]->(s) })
RETURN s.id AS id
ORDER BY s.id
LIMIT $first
