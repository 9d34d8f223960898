// The LangGraph store items of the tenant under a namespace prefix ($prefix, as in
// item/page; '' for all) in (path, key) order, one page after the item ($afterPath,
// $afterKey; '' and '' for the first page): what an export reads. Keyed
// rather than skipped, so a page costs the same however far into the store it is.
MATCH (n:StoreItem)
WHERE n.tenant = $tenant AND n.path STARTS WITH $prefix
  AND (n.path > $afterPath OR (n.path = $afterPath AND n.key > $afterKey))
RETURN n.path AS path, n.key AS key, n.value AS value,
       n.createdAt AS createdAt, n.updatedAt AS updatedAt
ORDER BY n.path, n.key
LIMIT $first
