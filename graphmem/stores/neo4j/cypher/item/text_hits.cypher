// BM25 over the tenant's store items (its own index, $index), and with it, in the same
// round trip (it runs while the query is embedded), the items under the prefix whose
// vector is still due (`score` null), as item/pending_hits reads them: search compares
// those with the query itself.
// `indexed` says whether a due item carries the tenant's label ($label), so Lucene holds
// its text; one that does not (item/write leaves a new item's label to
// item/vectors_set) comes with its whole text, and search scores it by BM25 itself.
// The due items are read first, Lucene after (UNION ALL returns its parts in order): an
// item labelled in between is then among Lucene's hits, where read the other way round
// it would be in neither.
// $lucene requires the token of the namespace prefix (itemScope), so Lucene ranks inside
// the prefix and its top $k are the prefix's, however many items the tenant holds
// elsewhere. Each hit carries its text (the first $chars characters): search scores the
// items not yet in Lucene against them.
MATCH (n:StoreItem)
USING INDEX n:StoreItem(tenant, vectorDue)
WHERE n.tenant = $tenant AND n.vectorDue IS NOT NULL AND n.path STARTS WITH $prefix
WITH n ORDER BY n.vectorDue DESC
LIMIT $cap
WITH n, $label IN labels(n) AS indexed
RETURN n.path AS path, n.key AS key, n.value AS value,
       n.createdAt AS createdAt, n.updatedAt AS updatedAt, null AS score,
       CASE WHEN indexed THEN left(n.itemText, $chars) ELSE n.itemText END AS text, indexed
UNION ALL
CALL db.index.fulltext.queryNodes($index, $lucene, {limit: $k}) YIELD node AS n, score
WHERE n.tenant = $tenant AND n.path STARTS WITH $prefix
RETURN n.path AS path, n.key AS key, n.value AS value,
       n.createdAt AS createdAt, n.updatedAt AS updatedAt, score,
       left(n.itemText, $chars) AS text, true AS indexed
