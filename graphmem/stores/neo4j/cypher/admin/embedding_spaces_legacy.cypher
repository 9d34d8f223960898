// Migration: vectors written before tenants recorded their model were all $model's (the
// only model graphmem had): tenants, tasks and episodes holding them say so.
MATCH (t:Tenant)
WHERE t.embeddingModel IS NULL
  AND EXISTS { MATCH (m:Memory) WHERE m.tenant = t.id AND m.vectorBytes IS NOT NULL }
SET t.embeddingModel = $model, t.embeddingDimensions = $dimensions
WITH count(t) AS tenants
OPTIONAL MATCH (n:Task|Episode)
WHERE n.embedding IS NOT NULL AND n.embeddingModel IS NULL
SET n.embeddingModel = $model
RETURN tenants, count(n) AS nodes
