// Episodic memory: tasks, their steps, episodes and the reflections drawn from them.
CREATE CONSTRAINT task_tenant_id IF NOT EXISTS FOR (t:Task) REQUIRE (t.tenant, t.id) IS UNIQUE;
CREATE CONSTRAINT step_tenant_id IF NOT EXISTS FOR (s:Step) REQUIRE (s.tenant, s.id) IS UNIQUE;
CREATE CONSTRAINT episode_tenant_id IF NOT EXISTS FOR (e:Episode) REQUIRE (e.tenant, e.id) IS UNIQUE;
CREATE CONSTRAINT reflection_tenant_key IF NOT EXISTS FOR (r:Reflection) REQUIRE (r.tenant, r.key) IS UNIQUE;
CREATE INDEX episode_tenant_signature IF NOT EXISTS FOR (e:Episode) ON (e.tenant, e.signature);
