// The last step of forgetUser, once the user's memories are gone: their sessions left
// empty, and the user node with its MENTIONED edges.
OPTIONAL MATCH (u:User {tenant: $tenant, id: $userId})
OPTIONAL MATCH (u)-[:HAS_SESSION]->(s:Session {tenant: $tenant})
WHERE NOT (s)-[:HAS_MEMORY]->()
WITH u, collect(s) AS empty
CALL (empty) {
  UNWIND empty AS s
  DETACH DELETE s
}
CALL (u) {
  WITH u WHERE u IS NOT NULL
  DETACH DELETE u
}
RETURN size(empty) AS sessions
