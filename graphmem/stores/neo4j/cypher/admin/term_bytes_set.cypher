// Backfill: set each listed memory's termBytes and speaker (computed by the service)
// and the analysis version they come from.
UNWIND $rows AS row
MATCH (m:Memory {tenant: row.tenant, id: row.id})
SET m.termBytes = row.termBytes, m.speaker = row.speaker, m.termVersion = $termVersion
