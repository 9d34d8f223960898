// Run once by the local launcher against the system database: Neo4j's first start
// leaves neo4j/neo4j, which must be changed before any other query.
ALTER CURRENT USER SET PASSWORD FROM 'neo4j' TO $password
