// Whether a one-off data migration has run (its marker node exists).
OPTIONAL MATCH (done:SchemaMigration {name: $name})
RETURN done IS NOT NULL AS done
