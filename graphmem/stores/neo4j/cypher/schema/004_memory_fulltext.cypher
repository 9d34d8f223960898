// Lexical (BM25) recall runs on one fulltext index per tenant (tenant/fulltext_index,
// made when the API starts; 008 drops the shared index earlier versions made).
// Conversation order within a session, for the adjacent turns recall adds as context.
CREATE INDEX memory_tenant_session_seq IF NOT EXISTS FOR (m:Memory) ON (m.tenant, m.sessionId, m.seq);
