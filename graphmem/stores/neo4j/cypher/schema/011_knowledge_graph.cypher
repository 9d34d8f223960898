// The knowledge graph of the MCP memory-server tools: one entity per tenant and exact
// name (backs every lookup by name, and orders read_graph's pages).
CREATE CONSTRAINT kg_entity_tenant_name IF NOT EXISTS FOR (e:KGEntity) REQUIRE (e.tenant, e.name) IS UNIQUE;
