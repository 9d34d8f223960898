// One tenant's memories whose stems were not hashed by this analysis version
// ($termVersion): written before termBytes existed, or by another version of
// enrich/lexical.py. In id order after $after (the last id of the batch before), so each
// batch starts where the last ended instead of walking again past what is done; ordered
// by (tenant, id), the unique constraint's order, so the index hands the rows over in
// order and the LIMIT stops the walk (ordering by id alone sorts every remaining row).
MATCH (m:Memory)
WHERE m.tenant = $tenant AND m.id > $after
  AND (m.termVersion IS NULL OR m.termVersion <> $termVersion)
RETURN m.id AS id, m.content AS content
ORDER BY m.tenant, m.id
LIMIT $batch
