// Every tenant that holds memories, as the memories themselves say (an index scan; the
// term backfill visits each, whether or not its Tenant node exists yet).
MATCH (m:Memory)
WHERE m.tenant IS NOT NULL
RETURN DISTINCT m.tenant AS tenant
ORDER BY tenant
