// Episodes per structure signature with their success rate.
MATCH (e:Episode {tenant: $tenant})
RETURN coalesce(e.signature, '(none)') AS signature, count(e) AS episodes,
       sum(CASE WHEN e.success THEN 1 ELSE 0 END) AS succeeded
ORDER BY episodes DESC, signature
