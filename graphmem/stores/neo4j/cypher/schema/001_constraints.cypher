// Uniqueness of ids within a tenant. Composite uniqueness constraints are available in
// Community Edition and back every MERGE on (tenant, id) with a range index.
CREATE CONSTRAINT tenant_id IF NOT EXISTS FOR (t:Tenant) REQUIRE t.id IS UNIQUE;
CREATE CONSTRAINT user_tenant_id IF NOT EXISTS FOR (u:User) REQUIRE (u.tenant, u.id) IS UNIQUE;
CREATE CONSTRAINT session_tenant_id IF NOT EXISTS FOR (s:Session) REQUIRE (s.tenant, s.id) IS UNIQUE;
CREATE CONSTRAINT memory_tenant_id IF NOT EXISTS FOR (m:Memory) REQUIRE (m.tenant, m.id) IS UNIQUE;
