// LangGraph store items whose vector is still to be set (memory/kinds/items/vectors.py):
// a small put answers before its text is embedded and marks the item with vectorDue.
// A node enters these indexes only while it holds the property, so they hold the pending
// items alone: a search reads its tenant's under a prefix (item/pending_hits), the
// sweep finds the tenants left behind by a process that died (admin/item_vector_tenants).
CREATE INDEX store_item_vector_due IF NOT EXISTS FOR (n:StoreItem) ON (n.tenant, n.vectorDue);
CREATE INDEX store_item_vector_due_any IF NOT EXISTS FOR (n:StoreItem) ON (n.vectorDue);
