// Lexical (BM25) recall over memory content. scopeToken (one token per tenant) lets a
// query filter by tenant inside Lucene, before ranking, instead of after it.
CREATE FULLTEXT INDEX memory_fulltext IF NOT EXISTS FOR (m:Memory) ON EACH [m.content, m.scopeToken]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}};
CREATE INDEX memory_tenant_session_seq IF NOT EXISTS FOR (m:Memory) ON (m.tenant, m.sessionId, m.seq);
