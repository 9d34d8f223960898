// Cosine against every embedded item under a namespace prefix, up to $cap of them:
// exact, and cheaper than the vector index for a prefix of a few thousand items. `seen`
// says how many were compared; at $cap the caller asks item/vector_index instead.
MATCH (n:StoreItem)
WHERE n.tenant = $tenant AND n.path STARTS WITH $prefix AND n.model = $model
WITH n LIMIT $cap
WITH collect(n) AS found
UNWIND found AS n
WITH n, size(found) AS seen, vector.similarity.cosine(n.embedding, $vector) AS score
ORDER BY score DESC, n.updatedAt DESC
LIMIT $k
RETURN n.path AS path, n.key AS key, n.value AS value,
       n.createdAt AS createdAt, n.updatedAt AS updatedAt, score, seen
