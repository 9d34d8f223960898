// A reflection keyed by what it says: re-running reflect updates it in place and links
// exactly the episodes that are its evidence now. A reflection drawn from an episode a
// forgetTask tombstoned (a reflect that read it before) is not written: no row.
WITH 1 AS one
WHERE none(id IN $evidence
           WHERE EXISTS { (:Tombstone {tenant: $tenant, kind: 'episode', subject: id}) })
MERGE (r:Reflection {tenant: $tenant, key: $key})
  ON CREATE SET r.id = $id, r.createdAt = $now, r.recordedAt = $now
SET r.kind = $kind, r.pattern = $pattern, r.support = $support, r.confidence = $confidence,
    r.signature = $signature, r.details = $details, r.updatedAt = $now
WITH r
OPTIONAL MATCH (r)-[old:DERIVED_FROM]->(:Episode)
DELETE old
WITH DISTINCT r
UNWIND $evidence AS episodeId
MATCH (e:Episode {tenant: $tenant, id: episodeId})
MERGE (r)-[:DERIVED_FROM]->(e)
WITH DISTINCT r
RETURN r {.*, evidence: [(r)-[:DERIVED_FROM]->(e:Episode) | e.id]} AS reflection
