// The tenant's store items under a namespace prefix whose vector is still to be set,
// newest first, at most $cap: a query search compares them with the query itself, so
// that an item is found by meaning the moment its put returns.
// A seek of the tenant's entries in store_item_vector_due (unhinted, the planner scanned
// every tenant's to read them in vectorDue order).
MATCH (n:StoreItem)
USING INDEX n:StoreItem(tenant, vectorDue)
WHERE n.tenant = $tenant AND n.vectorDue IS NOT NULL AND n.path STARTS WITH $prefix
WITH n ORDER BY n.vectorDue DESC
LIMIT $cap
RETURN n.path AS path, n.key AS key, n.value AS value,
       n.createdAt AS createdAt, n.updatedAt AS updatedAt, left(n.itemText, $chars) AS text
