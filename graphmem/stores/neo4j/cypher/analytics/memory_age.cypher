// Graph memories by type, tier and age bucket (analytics).
MATCH (m:Memory {tenant: $tenant})
WITH m, duration.inDays(m.createdAt, $now).days AS age
RETURN m.type AS type, m.tier AS tier,
       CASE WHEN age < 1 THEN '<1d' WHEN age < 7 THEN '1-7d' WHEN age < 30 THEN '7-30d'
            ELSE '30d+' END AS age,
       count(m) AS items, coalesce(sum(m.tokenCount), 0) AS tokens
ORDER BY type, tier, age
