// A batch of LangGraph store puts and deletes, in one transaction: all or nothing. Each
// item is one node keyed by (tenant, path, key) under the store_item_key constraint, so
// a put is one MERGE that concurrent puts of the same key cannot break (the last to
// commit wins). The value is JSON text; itemText, itemScope and the embedding are what
// search ranks (null for an item put with index=False). $puts arrive sorted by path
// and key, so two batches lock their keys in the same order.
// A row with `due` leaves its vector to item/vectors_set (vectorDue marks it until
// then), unless the item already holds the vector of this very text ($model's): a
// value changed outside its indexed text keeps its vector. A row with an embedding
// sets it now.
// The tenant's label ($label, which its item fulltext index covers) is set only on an
// item whose vector is not left due: a new item's text reaches Lucene in the
// transaction of item/vectors_set, not in the put's, whose commit the Lucene update
// made twice as slow (BENCHMARKS.md, LangGraph store). Until then a query search
// scores it itself (item/text_hits returns it as pending). An item already labelled
// keeps its label, so its changed text is in Lucene at once.
// A row from an import carries its exported createdAt and updatedAt: it never replaces
// a version the tenant holds that is as new or newer, so importing a file twice changes
// nothing and an import never undoes a later put.
CALL () {
  UNWIND $puts AS row
  MERGE (n:StoreItem {tenant: $tenant, path: row.path, key: row.key})
    ON CREATE SET n.createdAt = coalesce(row.createdAt, $now)
  WITH n, row
  WHERE row.updatedAt IS NULL OR n.updatedAt IS NULL OR n.updatedAt < row.updatedAt
  WITH n, row,
       row.due AND coalesce(n.itemText = row.text AND n.model = $model, false) AS kept
  SET n.value = row.value, n.itemText = row.text, n.itemScope = row.scope,
      n.userId = row.userId, n.updatedAt = coalesce(row.updatedAt, $now),
      n.vectorDue = CASE WHEN row.due AND NOT kept THEN $now END
  FOREACH (_ IN CASE WHEN kept THEN [] ELSE [1] END |
    SET n.embedding = row.embedding, n.model = row.model)
  FOREACH (_ IN CASE WHEN n.vectorDue IS NULL THEN [1] ELSE [] END | SET n:$($label))
  RETURN count(n) AS written
}
CALL () {
  UNWIND $deletes AS row
  MATCH (n:StoreItem {tenant: $tenant, path: row.path, key: row.key})
  DELETE n
  RETURN count(n) AS deleted
}
RETURN written, deleted
