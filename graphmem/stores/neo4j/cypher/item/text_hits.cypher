// BM25 over the tenant's store items (its own index, $index). $lucene requires the
// token of the namespace prefix (itemScope), so Lucene ranks inside the prefix and its
// top $k are the prefix's, however many items the tenant holds elsewhere.
// With them, in the same round trip (it runs while the query is embedded), the items
// under the prefix whose vector is still due (`text` set, `score` null), as
// item/pending_hits reads them: search compares those with the query itself.
CALL db.index.fulltext.queryNodes($index, $lucene, {limit: $k}) YIELD node AS n, score
WHERE n.tenant = $tenant AND n.path STARTS WITH $prefix
RETURN n.path AS path, n.key AS key, n.value AS value,
       n.createdAt AS createdAt, n.updatedAt AS updatedAt, score, null AS text
UNION ALL
MATCH (n:StoreItem)
USING INDEX n:StoreItem(tenant, vectorDue)
WHERE n.tenant = $tenant AND n.vectorDue IS NOT NULL AND n.path STARTS WITH $prefix
WITH n ORDER BY n.vectorDue DESC
LIMIT $cap
RETURN n.path AS path, n.key AS key, n.value AS value,
       n.createdAt AS createdAt, n.updatedAt AS updatedAt, null AS score,
       left(n.itemText, $chars) AS text
