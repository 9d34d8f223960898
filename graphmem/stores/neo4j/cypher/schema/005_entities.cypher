// Entity memory: one entity per tenant and resolution key; one alias row per name.
CREATE CONSTRAINT entity_tenant_key IF NOT EXISTS FOR (e:Entity) REQUIRE (e.tenant, e.key) IS UNIQUE;
CREATE CONSTRAINT entity_alias_tenant_alias IF NOT EXISTS FOR (a:EntityAlias) REQUIRE (a.tenant, a.alias) IS UNIQUE;
CREATE INDEX entity_tenant_type IF NOT EXISTS FOR (e:Entity) ON (e.tenant, e.type);
