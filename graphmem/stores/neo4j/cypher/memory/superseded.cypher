// Which of $ids (a ranking's leading memories) are superseded at the read's moment:
// every relation the memory asserts (it is among the relation's sources) has been closed
// by a later memory that is itself held then. Returned with the memories that closed
// them: the ranking puts a superseded memory below its closers (memory/search/ranking.py).
// The closing is seen at $asOf by its record time (closedAt; validUntil on a relation
// closed before graphmem kept both clocks) and at $validAt by its valid time.
UNWIND $ids AS id
MATCH (m:Memory {tenant: $tenant, id: id})-[:MENTIONS]->(:Entity)-[r]->(:Entity)
WHERE type(r) IN $types AND id IN r.sources
WITH id, collect(DISTINCT r) AS rels
WITH id, rels,
     [r IN rels WHERE r.validUntil IS NOT NULL AND r.closedBy IS NOT NULL
        AND ($asOf IS NULL OR coalesce(r.closedAt, r.validUntil) <= $asOf)
        AND ($validAt IS NULL OR r.validUntil <= $validAt)
        AND EXISTS {
          MATCH (c:Memory {tenant: $tenant, id: r.closedBy})
          WHERE CASE WHEN $asOf IS NULL THEN c.retractedAt IS NULL
                ELSE (c.retractedAt IS NULL OR c.retractedAt > $asOf)
                  AND none(i IN range(0, size(coalesce(c.restoredAt, [])) - 1)
                           WHERE c.pastRetractedAt[i] <= $asOf < c.restoredAt[i]) END
        }] AS closed
WHERE size(closed) = size(rels)
RETURN id, [r IN closed | r.closedBy] AS closers
