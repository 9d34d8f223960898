// forgetRecords: the records by id with their CONFORMS_TO link (the schema stays: other
// records use it). At most 500 ids per call.
UNWIND $ids AS id
MATCH (r:Record {tenant: $tenant, id: id})
WITH r, COUNT { (r)--() } AS links
DETACH DELETE r
RETURN count(*) AS removed, sum(links) AS relationships
