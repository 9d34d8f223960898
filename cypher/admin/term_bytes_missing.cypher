// Memories whose stems were not hashed by this analysis version ($termVersion): written
// before termBytes existed, or by another version of enrich/lexical.py.
MATCH (m:Memory)
WHERE m.termVersion IS NULL OR m.termVersion <> $termVersion
RETURN m.tenant AS tenant, m.id AS id, m.content AS content
LIMIT $batch
