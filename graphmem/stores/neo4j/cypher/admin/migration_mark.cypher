// Record that a one-off data migration has run, so later start-ups skip it.
MERGE (done:SchemaMigration {name: $name})
ON CREATE SET done.at = datetime()
RETURN done.name AS name
