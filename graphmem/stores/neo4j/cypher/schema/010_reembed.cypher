// `graphmem reembed` (cypher/reembed): the memories whose next vectors are ready, found
// without reading the tenant's other memories. nextModel exists only while a reembed runs.
CREATE INDEX memory_next_model IF NOT EXISTS FOR (m:Memory) ON (m.tenant, m.nextModel)
