// What a tenant stores besides memories, for its quota's exact count (memory/tiers/admission.py,
// graphmem/memory/tiers/quota.py): items and bytes (characters of the text and JSON each holds) per
// kind, with no row for a kind it has none of. Memories are counted by memory/stats;
// sessions, users and entities follow from memories and are not counted. Each match
// names the key of its label's (tenant, key) constraint, so it seeks that index for the
// tenant rather than scanning the label; hand-overs are found from their tasks.
CALL () {
  MATCH (n:Task) WHERE n.tenant = $tenant AND n.id IS NOT NULL
  RETURN 'task' AS kind, count(n) AS items, sum(size(coalesce(n.description, ''))) AS bytes
  UNION ALL
  MATCH (n:Step) WHERE n.tenant = $tenant AND n.id IS NOT NULL
  RETURN 'step' AS kind, count(n) AS items,
         sum(size(coalesce(n.action, '')) + size(coalesce(n.result, ''))) AS bytes
  UNION ALL
  MATCH (t:Task)-[:TRANSFERRED]->(n:Transfer) WHERE t.tenant = $tenant AND t.id IS NOT NULL
  RETURN 'transfer' AS kind, count(n) AS items, sum(size(coalesce(n.reason, ''))) AS bytes
  UNION ALL
  MATCH (n:Episode) WHERE n.tenant = $tenant AND n.id IS NOT NULL
  RETURN 'episode' AS kind, count(n) AS items,
         sum(size(coalesce(n.description, '')) + size(coalesce(n.outcome, ''))
             + size(coalesce(n.metrics, '')) + size(coalesce(n.mappings, ''))
             + reduce(total = 0, lesson IN coalesce(n.lessons, []) | total + size(lesson)))
         AS bytes
  UNION ALL
  MATCH (n:Reflection) WHERE n.tenant = $tenant AND n.key IS NOT NULL
  RETURN 'reflection' AS kind, count(n) AS items,
         sum(size(coalesce(n.pattern, '')) + size(coalesce(n.details, ''))) AS bytes
  UNION ALL
  MATCH (n:Record) WHERE n.tenant = $tenant AND n.id IS NOT NULL
  RETURN 'record' AS kind, count(n) AS items, sum(size(coalesce(n.data, ''))) AS bytes
  UNION ALL
  MATCH (n:StoreItem) WHERE n.tenant = $tenant AND n.path IS NOT NULL
  RETURN 'storeItem' AS kind, count(n) AS items,
         sum(size(coalesce(n.value, '')) + size(coalesce(n.itemText, ''))) AS bytes
  UNION ALL
  MATCH (n:RecordSchema) WHERE n.tenant = $tenant AND n.name IS NOT NULL
  RETURN 'recordSchema' AS kind, count(n) AS items, sum(size(coalesce(n.schema, ''))) AS bytes
  UNION ALL
  MATCH (n:Persona) WHERE n.tenant = $tenant AND n.agentId IS NOT NULL
  RETURN 'persona' AS kind, count(n) AS items,
         sum(size(coalesce(n.role, '')) + size(coalesce(n.tone, ''))
             + reduce(total = 0, s IN coalesce(n.expertise, []) + coalesce(n.constraints, [])
                      | total + size(s))) AS bytes
  UNION ALL
  MATCH (n:KGEntity) WHERE n.tenant = $tenant AND n.name IS NOT NULL
  RETURN 'kgEntity' AS kind, count(n) AS items,
         sum(size(n.name) + size(coalesce(n.entityType, ''))
             + reduce(total = 0, o IN coalesce(n.observations, []) | total + size(o))) AS bytes
  UNION ALL
  MATCH (n:KGEntity)-[r:KG_RELATION]->() WHERE n.tenant = $tenant AND n.name IS NOT NULL
  RETURN 'kgRelation' AS kind, count(r) AS items, sum(size(r.relationType)) AS bytes
}
RETURN kind, items, bytes
