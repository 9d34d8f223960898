// Entity memory: one row per mention of a spilled memory. Entities are keyed
// by tenant + resolution key (type|normalised name); the MENTIONS edge keeps the exact
// surface form and how it was resolved, which is the provenance of every variant merge.
// Idempotent: a retried spill MERGEs the same nodes and edges. An edge made here is
// marked uncounted until entity/count_mentions adds it to the counts (once, however
// often this runs).
UNWIND $mentions AS row
MATCH (m:Memory {tenant: $tenant, id: row.memoryId})
MERGE (e:Entity {tenant: $tenant, key: row.key})
  ON CREATE SET e.name = row.name, e.type = row.type, e.aliases = [], e.createdAt = row.at
SET e.aliases = CASE WHEN row.surface IN e.aliases THEN e.aliases ELSE e.aliases + row.surface END,
    e.labels = CASE WHEN row.label IN coalesce(e.labels, []) THEN e.labels
                    ELSE coalesce(e.labels, []) + row.label END
MERGE (m)-[r:MENTIONS]->(e)
  ON CREATE SET r.uncounted = true
SET r.surface = row.surface, r.via = row.via, r.start = row.start, r.end = row.end
RETURN count(*) AS mentions
