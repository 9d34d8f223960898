// `graphmem reembed`: the tenant's memories, and those whose vectors (or next vectors)
// are $model's already: its progress bar.
MATCH (m:Memory {tenant: $tenant})
RETURN count(m) AS total,
       count(CASE WHEN m.embeddingModel = $model OR m.nextModel = $model THEN 1 END) AS done
