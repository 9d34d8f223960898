// `graphmem reembed`, step 1: a page of the tenant's memories (after $after, by id) whose
// vectors are not $model's and have no next vectors of $model's yet. Resumable: what a
// killed run embedded is not read again.
MATCH (m:Memory {tenant: $tenant})
WHERE m.id > $after
  AND coalesce(m.embeddingModel, '') <> $model
  AND coalesce(m.nextModel, '') <> $model
RETURN m.id AS id, m.content AS content
ORDER BY m.id
LIMIT $batch
