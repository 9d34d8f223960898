// What the graph holds of an erasure's subject (a user, a session or memory ids; the
// others are null or empty): the receipt's counts before the erasure, and its
// verification after, when every count must be 0. Vector and fulltext index entries go
// with their nodes: they are counted as the memories that carry an embedding and the
// memories with the tenant's fulltext label ($label).
CALL () {
  MATCH (m:Memory {tenant: $tenant, userId: $userId})
  RETURN m
  UNION
  MATCH (m:Memory {tenant: $tenant, sessionId: $sessionId})
  RETURN m
  UNION
  UNWIND $ids AS id
  MATCH (m:Memory {tenant: $tenant, id: id})
  RETURN m
}
WITH m, COUNT { (m)-[:MENTIONS]->() } AS mentions, COUNT { ()-[:HAS_MEMORY]->(m) } AS held,
     COUNT { (m)--() } AS edges
WITH count(m) AS memories,
     sum(CASE WHEN m.embedding IS NOT NULL THEN 1 ELSE 0 END) AS embedded,
     sum(CASE WHEN $label IN labels(m) THEN 1 ELSE 0 END) AS fulltext,
     sum(mentions) AS mentions, sum(held) AS held, sum(edges) AS edges,
     collect(DISTINCT m.sessionId)[..$maxSessions] AS sessions
OPTIONAL MATCH (u:User {tenant: $tenant, id: $userId})
WITH memories, embedded, fulltext, mentions, held, edges, sessions, u,
     COUNT { (u)-[:MENTIONED]->() } AS mentioned,
     [(u)-[:HAS_SESSION]->(s:Session) | s.id][..$maxSessions] AS userSessions
OPTIONAL MATCH (s:Session {tenant: $tenant, id: $sessionId})
RETURN memories, embedded, fulltext, mentions, held, edges,
       CASE WHEN u IS NULL THEN 0 ELSE 1 END AS users, mentioned,
       CASE WHEN s IS NULL THEN 0 ELSE 1 END AS sessionNodes,
       [x IN sessions + userSessions WHERE x IS NOT NULL] AS sessionIds
