// A user's tasks (those it owns) are listed for export, and an imported task is found
// again by its import id, so a rerun of an import adds it once.
CREATE INDEX task_tenant_owner IF NOT EXISTS FOR (t:Task) ON (t.tenant, t.owner);
CREATE CONSTRAINT task_tenant_import IF NOT EXISTS FOR (t:Task) REQUIRE (t.tenant, t.importId) IS UNIQUE;
