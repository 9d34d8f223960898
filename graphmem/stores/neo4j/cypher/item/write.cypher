// A batch of LangGraph store puts and deletes, in one transaction: all or nothing. Each
// item is one node keyed by (tenant, path, key) under the store_item_key constraint, so
// a put is one MERGE that concurrent puts of the same key cannot break (the last to
// commit wins). The value is JSON text; itemText, itemScope and the embedding are what
// search ranks (null for an item put with index=False). $puts arrive sorted by path
// and key, so two batches lock their keys in the same order.
CALL () {
  UNWIND $puts AS row
  MERGE (n:StoreItem {tenant: $tenant, path: row.path, key: row.key})
    ON CREATE SET n:$($label), n.createdAt = $now
  SET n.value = row.value, n.itemText = row.text, n.itemScope = row.scope,
      n.embedding = row.embedding, n.model = row.model, n.userId = row.userId,
      n.updatedAt = $now
  RETURN count(n) AS written
}
CALL () {
  UNWIND $deletes AS row
  MATCH (n:StoreItem {tenant: $tenant, path: row.path, key: row.key})
  DELETE n
  RETURN count(n) AS deleted
}
RETURN written, deleted
