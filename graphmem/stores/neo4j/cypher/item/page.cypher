// Every LangGraph store item under a namespace prefix ($prefix: the labels joined by
// '.', with a trailing '.'; '' for the whole store), newest first, one page.
MATCH (n:StoreItem)
WHERE n.tenant = $tenant AND n.path STARTS WITH $prefix
RETURN n.path AS path, n.key AS key, n.value AS value,
       n.createdAt AS createdAt, n.updatedAt AS updatedAt
ORDER BY n.updatedAt DESC, n.path, n.key
SKIP $skip LIMIT $first
