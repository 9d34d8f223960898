// The tenant's own fulltext index over its LangGraph store items (made when the API
// starts: stores/neo4j/fulltext.py), apart from its memories' index so that neither
// crowds the other's top hits and BM25's statistics stay the tenant's own. itemScope
// holds one token per namespace prefix of the item, so a search ranks inside its prefix.
// __INDEX__ and __LABEL__ are names derived from a hex hash of the tenant id
// (models.tenant_item_fulltext), checked against [A-Za-z0-9_] before use; no input text
// ever reaches this statement.
CREATE FULLTEXT INDEX __INDEX__ IF NOT EXISTS FOR (n:__LABEL__) ON EACH [n.itemText, n.itemScope]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}
