// Persona, structured-record and conversation-level constraints.
CREATE CONSTRAINT persona_tenant_agent IF NOT EXISTS FOR (p:Persona) REQUIRE (p.tenant, p.agentId) IS UNIQUE;
CREATE CONSTRAINT record_schema_tenant_name IF NOT EXISTS FOR (s:RecordSchema) REQUIRE (s.tenant, s.name) IS UNIQUE;
CREATE CONSTRAINT record_tenant_id IF NOT EXISTS FOR (r:Record) REQUIRE (r.tenant, r.id) IS UNIQUE;
CREATE INDEX record_tenant_schema IF NOT EXISTS FOR (r:Record) ON (r.tenant, r.schema);
