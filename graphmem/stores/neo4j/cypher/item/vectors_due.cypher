// The tenant's store items still waiting for their vector since $before or earlier,
// oldest first: what the sweep embeds for a process that put them and died. `text` is
// what is embedded (the first $chars characters of itemText).
MATCH (n:StoreItem)
USING INDEX n:StoreItem(tenant, vectorDue)
WHERE n.tenant = $tenant AND n.vectorDue <= $before
WITH n ORDER BY n.vectorDue
LIMIT $first
RETURN n.path AS path, n.key AS key, left(n.itemText, $chars) AS text
