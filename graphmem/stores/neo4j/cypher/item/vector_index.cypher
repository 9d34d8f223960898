// Nearest store items through the shared vector index, for a prefix too large to
// compare exactly (item/vector_exact): $k neighbours, then the tenant and prefix.
CALL db.index.vector.queryNodes('store_item_embedding', $k, $vector) YIELD node AS n, score
WHERE n.tenant = $tenant AND n.path STARTS WITH $prefix AND n.model = $model
RETURN n.path AS path, n.key AS key, n.value AS value,
       n.createdAt AS createdAt, n.updatedAt AS updatedAt, score
