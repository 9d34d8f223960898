// Records of a schema whose fields equal the given values (each a token, see add), stored
// by $asOf (record time; null: now). The record-time term of the memories' predicate
// (memory/text_hits.cypher): a record is never changed or retracted once added.
MATCH (r:Record {tenant: $tenant, schema: $schema})
WHERE all(t IN $tokens WHERE t IN r.fields)
  AND ($asOf IS NULL OR coalesce(r.recordedAt, r.createdAt) <= $asOf)
RETURN r.id AS id, r.data AS data, r.createdAt AS createdAt,
       coalesce(r.recordedAt, r.createdAt) AS recordedAt
ORDER BY r.createdAt DESC
LIMIT $limit
