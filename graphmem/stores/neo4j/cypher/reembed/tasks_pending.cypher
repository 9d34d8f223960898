// `graphmem reembed`, step 4: the tenant's tasks and episodes whose vectors are not
// $model's, with the text each was embedded from (episodes.py): a task's description;
// an episode's description, outcome and lessons.
MATCH (n:Task|Episode)
WHERE n.tenant = $tenant AND n.embedding IS NOT NULL
  AND coalesce(n.embeddingModel, '') <> $model
RETURN n.id AS id, n:Task AS task, n.description AS description, n.outcome AS outcome,
       n.lessons AS lessons
LIMIT $batch
