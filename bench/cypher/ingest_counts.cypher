// bench/ingest.py's check that an ingest is complete: a tenant's memories, those with
// their vector, those spilled out of the hot tier, and their entity mentions.
MATCH (m:Memory {tenant: $tenant})
RETURN count(m) AS memories,
       count(m.vectorBytes) AS with_vectors,
       count(CASE WHEN m.tier IN ['warm', 'cold'] THEN 1 END) AS spilled,
       sum(COUNT { (m)-[:MENTIONS]->() }) AS mentions
