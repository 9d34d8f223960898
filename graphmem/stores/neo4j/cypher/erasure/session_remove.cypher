// The last step of forgetSession, once its memories are gone: the session node, if no
// memory is left in it (one written meanwhile, after the tombstone, is a new memory).
OPTIONAL MATCH (s:Session {tenant: $tenant, id: $sessionId})
WHERE NOT (s)-[:HAS_MEMORY]->()
CALL (s) {
  WITH s WHERE s IS NOT NULL
  DETACH DELETE s
}
RETURN CASE WHEN s IS NULL THEN 0 ELSE 1 END AS sessions
