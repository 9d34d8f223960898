// One entity (resolved through SAME_AS) with the memories that mention it and its
// relations, open and closed, including those of entities merged into it.
MATCH (x:Entity {tenant: $tenant, key: $key})
OPTIONAL MATCH (x)-[:SAME_AS]->(c:Entity)
WITH coalesce(c, x) AS e
WITH e, [e] + [(s:Entity)-[:SAME_AS]->(e) | s] AS members
RETURN e {.key, .name, .type, .aliases, .mentionCount, .firstSeen, .lastSeen,
          mergedFrom: [(s:Entity)-[:SAME_AS]->(e) | s.key]} AS entity,
       [m IN members | [(mem:Memory)-[r:MENTIONS]->(m) |
          {memoryId: mem.id, content: mem.content, surface: r.surface, via: r.via,
           createdAt: mem.createdAt, userId: mem.userId}]] AS mentions,
       [m IN members | [(m)-[r]->(o:Entity) WHERE NOT type(r) IN ['SAME_AS', 'CO_OCCURS'] |
          {type: type(r), direction: 'out', other: o.key, otherName: o.name,
           validFrom: r.validFrom, validUntil: r.validUntil, sources: r.sources,
           closedBy: r.closedBy}]] AS outgoing,
       [m IN members | [(o:Entity)-[r]->(m) WHERE NOT type(r) IN ['SAME_AS', 'CO_OCCURS'] |
          {type: type(r), direction: 'in', other: o.key, otherName: o.name,
           validFrom: r.validFrom, validUntil: r.validUntil, sources: r.sources,
           closedBy: r.closedBy}]] AS incoming,
       [m IN members | [(m)-[r:CO_OCCURS]-(o:Entity) | {other: o.key, weight: r.weight}]]
         AS cooccurring
