// One entity (resolved through SAME_AS) with the memories that mention it and its
// relations, including those of entities merged into it, as seen at the read's moment
// (domain/moments.py, docs/concepts.md "Two clocks"): mentions by memories seen then;
// relations graphmem had recorded by $asOf that hold then: asserted by a memory held
// then, begun by $validAt, and not closed (by $validAt in valid time, by $asOf in record
// time: closedAt, or validUntil on a relation closed before both clocks were kept) by a
// memory held then. With $history, every relation recorded by $asOf, closed or not, and
// retracted memories' mentions too.
MATCH (x:Entity {tenant: $tenant, key: $key})
OPTIONAL MATCH (x)-[:SAME_AS]->(c:Entity)
WITH coalesce(c, x) AS e
WITH e, [e] + [(s:Entity)-[:SAME_AS]->(e) | s] AS members
RETURN e {.key, .name, .type, .aliases, .mentionCount, .firstSeen, .lastSeen,
          mergedFrom: [(s:Entity)-[:SAME_AS]->(e) | s.key]} AS entity,
       [m IN members | [(mem:Memory)-[r:MENTIONS]->(m)
          WHERE ($history OR CASE WHEN $asOf IS NULL THEN mem.retractedAt IS NULL
              ELSE (mem.retractedAt IS NULL OR mem.retractedAt > $asOf)
                AND none(i IN range(0, size(coalesce(mem.restoredAt, [])) - 1)
                         WHERE mem.pastRetractedAt[i] <= $asOf < mem.restoredAt[i]) END)
            AND ($asOf IS NULL OR coalesce(mem.recordedAt, mem.createdAt) <= $asOf)
            AND ($validAt IS NULL OR mem.createdAt <= $validAt) |
          {memoryId: mem.id, content: mem.content, surface: r.surface, via: r.via,
           createdAt: mem.createdAt, userId: mem.userId}]] AS mentions,
       [m IN members | [(m)-[r]->(o:Entity) WHERE NOT type(r) IN ['SAME_AS', 'CO_OCCURS']
          AND ($asOf IS NULL OR coalesce(r.recordedAt, r.validFrom) <= $asOf)
            AND ($history OR (
              ($validAt IS NULL OR r.validFrom <= $validAt)
              AND any(s IN r.sources WHERE EXISTS {
                MATCH (sm:Memory {tenant: $tenant, id: s})
                WHERE CASE WHEN $asOf IS NULL THEN sm.retractedAt IS NULL
                        ELSE (sm.retractedAt IS NULL OR sm.retractedAt > $asOf)
                          AND none(i IN range(0, size(coalesce(sm.restoredAt, [])) - 1)
                                   WHERE sm.pastRetractedAt[i] <= $asOf < sm.restoredAt[i]) END })
              AND NOT (r.validUntil IS NOT NULL
                AND ($asOf IS NULL OR coalesce(r.closedAt, r.validUntil) <= $asOf)
                AND ($validAt IS NULL OR r.validUntil <= $validAt)
                AND (r.closedBy IS NULL OR EXISTS {
                  MATCH (cm:Memory {tenant: $tenant, id: r.closedBy})
                  WHERE CASE WHEN $asOf IS NULL THEN cm.retractedAt IS NULL
                          ELSE (cm.retractedAt IS NULL OR cm.retractedAt > $asOf)
                            AND none(i IN range(0, size(coalesce(cm.restoredAt, [])) - 1)
                                     WHERE cm.pastRetractedAt[i] <= $asOf < cm.restoredAt[i]) END })))) |
          {type: type(r), direction: 'out', other: o.key, otherName: o.name,
           validFrom: r.validFrom, validUntil: r.validUntil, sources: r.sources,
           closedBy: r.closedBy, recordedAt: r.recordedAt, closedAt: r.closedAt}]] AS outgoing,
       [m IN members | [(o:Entity)-[r]->(m) WHERE NOT type(r) IN ['SAME_AS', 'CO_OCCURS']
          AND ($asOf IS NULL OR coalesce(r.recordedAt, r.validFrom) <= $asOf)
            AND ($history OR (
              ($validAt IS NULL OR r.validFrom <= $validAt)
              AND any(s IN r.sources WHERE EXISTS {
                MATCH (sm:Memory {tenant: $tenant, id: s})
                WHERE CASE WHEN $asOf IS NULL THEN sm.retractedAt IS NULL
                        ELSE (sm.retractedAt IS NULL OR sm.retractedAt > $asOf)
                          AND none(i IN range(0, size(coalesce(sm.restoredAt, [])) - 1)
                                   WHERE sm.pastRetractedAt[i] <= $asOf < sm.restoredAt[i]) END })
              AND NOT (r.validUntil IS NOT NULL
                AND ($asOf IS NULL OR coalesce(r.closedAt, r.validUntil) <= $asOf)
                AND ($validAt IS NULL OR r.validUntil <= $validAt)
                AND (r.closedBy IS NULL OR EXISTS {
                  MATCH (cm:Memory {tenant: $tenant, id: r.closedBy})
                  WHERE CASE WHEN $asOf IS NULL THEN cm.retractedAt IS NULL
                          ELSE (cm.retractedAt IS NULL OR cm.retractedAt > $asOf)
                            AND none(i IN range(0, size(coalesce(cm.restoredAt, [])) - 1)
                                     WHERE cm.pastRetractedAt[i] <= $asOf < cm.restoredAt[i]) END })))) |
          {type: type(r), direction: 'in', other: o.key, otherName: o.name,
           validFrom: r.validFrom, validUntil: r.validUntil, sources: r.sources,
           closedBy: r.closedBy, recordedAt: r.recordedAt, closedAt: r.closedAt}]] AS incoming,
       [m IN members | [(m)-[r:CO_OCCURS]-(o:Entity) | {other: o.key, weight: r.weight}]]
         AS cooccurring
