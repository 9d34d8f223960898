// Relations between entities (LOCATED_IN, NEAR, WORKS_FOR; the type is checked against
// a whitelist before it gets here). One open edge per (subject, type, object) collects
// the memories that assert it in `sources`. For functional types (an organisation is
// in one city, a person works for one employer) a newer fact closes the open edges to
// other objects: validUntil and closedBy are set, nothing is deleted.
// Two clocks (docs/concepts.md): validFrom and validUntil are valid time (when the
// memories say it held); recordedAt and closedAt are record time (when graphmem learned
// the relation, and when it learned of its end), so a read as of a moment sees the
// relation as graphmem held it then.
UNWIND $relations AS row
// evidence only from a memory that still exists: one forgotten while its entities were
// being read leaves no trace of its id here
WITH row WHERE EXISTS { MATCH (:Memory {tenant: $tenant, id: row.memoryId}) }
MATCH (a:Entity {tenant: $tenant, key: row.subject})
MATCH (b:Entity {tenant: $tenant, key: row.object})
CALL (a, b, row) {
  OPTIONAL MATCH (a)-[open:$(row.type)]->(b)
  WHERE open.validUntil IS NULL
  WITH a, b, row, head(collect(open)) AS open
  CALL (a, b, row, open) {
    WITH a, b, row, open WHERE open IS NULL
    CREATE (a)-[r:$(row.type)]->(b)
    SET r.validFrom = row.at, r.validUntil = null, r.sources = [row.memoryId],
        r.recordedAt = datetime(),
        r.sourceMemoryId = row.memoryId, r.tenant = $tenant
  }
  CALL (open, row) {
    WITH open, row WHERE open IS NOT NULL AND NOT row.memoryId IN open.sources
    SET open.sources = open.sources + row.memoryId,
        open.validFrom = CASE WHEN row.at < open.validFrom THEN row.at ELSE open.validFrom END
  }
}
CALL (a, b, row) {
  WITH a, b, row WHERE row.functional
  MATCH (a)-[old:$(row.type)]->(other:Entity)
  WHERE other <> b AND old.validUntil IS NULL AND old.validFrom <= row.at
  SET old.validUntil = row.at, old.closedBy = row.memoryId, old.closedAt = datetime()
}
RETURN count(*) AS relations
