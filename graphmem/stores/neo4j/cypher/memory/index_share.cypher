// How many of the memories in the shared vector index are the tenant's: its label
// ($label, tenant/fulltext_index) against all :Memory nodes, both from the count store.
// Search sizes its first probe of the index by this share (memory/vector_hits_index).
CALL () { MATCH (m:Memory) RETURN count(m) AS total }
CALL () { MATCH (m:$($label)) RETURN count(m) AS mine }
RETURN mine, total
