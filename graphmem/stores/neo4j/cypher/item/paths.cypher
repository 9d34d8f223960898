// The distinct namespace paths holding store items under a prefix, in order, from
// $after on (paging), at most $first.
MATCH (n:StoreItem)
WHERE n.tenant = $tenant AND n.path STARTS WITH $prefix AND n.path > $after
WITH DISTINCT n.path AS path
ORDER BY path
LIMIT $first
RETURN path
