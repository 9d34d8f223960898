// One fulltext index per tenant, so that BM25's term statistics (document frequencies,
// average length) are the tenant's own: another tenant's text moves neither its scores
// nor its ranking. Schema commands take no parameters, so __INDEX__ and __LABEL__ are
// replaced by names derived from a hex hash of the tenant id (models.tenant_fulltext),
// checked against [A-Za-z0-9_] before use; no input text ever reaches this statement.
CREATE FULLTEXT INDEX __INDEX__ IF NOT EXISTS FOR (m:__LABEL__) ON EACH [m.content, m.scopeToken]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}
