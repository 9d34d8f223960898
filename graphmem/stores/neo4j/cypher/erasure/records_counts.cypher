// What the graph holds of records by id: the ids found (forgetRecords tombstones those
// only) and their relationships; after the erasure, the second look, when all are 0.
UNWIND $ids AS id
MATCH (r:Record {tenant: $tenant, id: id})
RETURN collect(r.id) AS found, sum(COUNT { (r)--() }) AS relationships
