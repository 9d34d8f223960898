// LangGraph store items by (path, key), one row per asked key in the order asked
// (null fields for a key not stored).
UNWIND $rows AS row
OPTIONAL MATCH (n:StoreItem {tenant: $tenant, path: row.path, key: row.key})
RETURN row.i AS i, n.path AS path, n.key AS key, n.value AS value,
       n.createdAt AS createdAt, n.updatedAt AS updatedAt
