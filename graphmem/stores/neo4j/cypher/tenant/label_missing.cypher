// Migration: give a tenant's memories written before per-tenant fulltext indexes the
// label its index covers, a batch at a time. (Dynamic labels are not allowed in WHERE,
// hence the test on labels().)
MATCH (m:Memory {tenant: $tenant})
WHERE NOT $label IN labels(m)
WITH m LIMIT $batch
SET m:$($label)
RETURN count(m) AS labelled
