// Range indexes for the scoped lookups every memory query starts from.
CREATE INDEX memory_tenant_session_tier IF NOT EXISTS FOR (m:Memory) ON (m.tenant, m.sessionId, m.tier);
CREATE INDEX memory_tenant_user IF NOT EXISTS FOR (m:Memory) ON (m.tenant, m.userId);
CREATE INDEX memory_tenant_tier IF NOT EXISTS FOR (m:Memory) ON (m.tenant, m.tier);
