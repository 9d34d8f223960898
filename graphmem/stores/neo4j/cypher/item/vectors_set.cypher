// Vectors for pending store items. A vector is set only while the item still holds the
// text it was computed from (the first $chars characters of itemText): a put that
// changed the text since marked the item again, and its own vector follows.
// The tenant's label ($label) puts a new item's text into its fulltext index here, in
// the same transaction that clears vectorDue (item/write leaves it off): an item is
// either labelled or marked, never neither, so a search always finds it by its text.
// The key's own index, not the pending items' (the planner picked the latter, reading
// every pending item of the tenant for each row).
// The node's write lock is taken before the text is compared: read before it, the
// comparison saw the text a put was replacing (its transaction holding the lock), passed,
// and the old text's vector landed on the new text once the put committed. Under the lock
// the comparison reads what the put committed.
UNWIND $rows AS row
MATCH (n:StoreItem {tenant: $tenant, path: row.path, key: row.key})
USING INDEX n:StoreItem(tenant, path, key)
SET n._lock = true
REMOVE n._lock
WITH n, row
WHERE n.vectorDue IS NOT NULL AND left(n.itemText, $chars) = row.text
SET n.embedding = row.embedding, n.model = $model, n:$($label)
REMOVE n.vectorDue
RETURN count(n) AS set
