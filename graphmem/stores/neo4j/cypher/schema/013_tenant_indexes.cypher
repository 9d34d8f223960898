// One index on the tenant alone for every label a statement reads by tenant only (a
// tenant's stats, its pages of memories, its scope view, its episodes, reflections,
// aliases, records and knowledge-graph entities). The composite indexes that lead with
// the tenant serve a seek only when every one of their properties is constrained, so
// without these the planner scanned the label: one tenant's read then touched every
// tenant's nodes, and took longer the more the others stored.
CREATE INDEX memory_tenant IF NOT EXISTS FOR (n:Memory) ON (n.tenant);
CREATE INDEX entity_tenant IF NOT EXISTS FOR (n:Entity) ON (n.tenant);
CREATE INDEX entity_alias_tenant IF NOT EXISTS FOR (n:EntityAlias) ON (n.tenant);
CREATE INDEX episode_tenant IF NOT EXISTS FOR (n:Episode) ON (n.tenant);
CREATE INDEX reflection_tenant IF NOT EXISTS FOR (n:Reflection) ON (n.tenant);
CREATE INDEX record_tenant IF NOT EXISTS FOR (n:Record) ON (n.tenant);
CREATE INDEX kg_entity_tenant IF NOT EXISTS FOR (n:KGEntity) ON (n.tenant);
CREATE INDEX task_tenant IF NOT EXISTS FOR (n:Task) ON (n.tenant);
// an undo finds its merge by id (entity/undo_merge), not by scanning every merge
CREATE INDEX same_as_id IF NOT EXISTS FOR ()-[r:SAME_AS]-() ON (r.id);
