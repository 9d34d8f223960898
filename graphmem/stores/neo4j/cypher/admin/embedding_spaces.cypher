// Every tenant's embedding model, for the one line a server prints at start when some
// hold another model's vectors than it embeds with (memory/writepath/spaces.py). Ids and model
// names only.
MATCH (t:Tenant)
WHERE t.embeddingModel IS NOT NULL
RETURN t.id AS tenant, t.embeddingModel AS model
ORDER BY tenant
