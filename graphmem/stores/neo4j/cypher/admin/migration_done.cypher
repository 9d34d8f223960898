// Whether a one-off data migration has run (its marker node exists). Counted, so that a
// marker written twice (two processes migrating at once: MERGE alone does not lock
// without a constraint) still answers one row.
OPTIONAL MATCH (done:SchemaMigration {name: $name})
RETURN count(done) > 0 AS done
