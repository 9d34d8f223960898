// BM25 over the tenant's store items (its own index, $index). $lucene requires the
// token of the namespace prefix (itemScope), so Lucene ranks inside the prefix and its
// top $k are the prefix's, however many items the tenant holds elsewhere.
CALL db.index.fulltext.queryNodes($index, $lucene, {limit: $k}) YIELD node AS n, score
WHERE n.tenant = $tenant AND n.path STARTS WITH $prefix
RETURN n.path AS path, n.key AS key, n.value AS value,
       n.createdAt AS createdAt, n.updatedAt AS updatedAt, score
