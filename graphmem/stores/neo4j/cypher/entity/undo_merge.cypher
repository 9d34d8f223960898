// Undo a merge: drop its SAME_AS edge; both entities stand on their own again.
MATCH (s:Entity {tenant: $tenant})-[r:SAME_AS {id: $mergeId}]->(t:Entity {tenant: $tenant})
WITH s, t, r, r.via AS via
DELETE r
RETURN s.key AS source, t.key AS target
