// The one fulltext index over every tenant's memories shared its term statistics across
// tenants (a side channel: one tenant's text moved another's BM25 scores). Each tenant
// now has an index of its own (tenant/fulltext_index), made when the API starts.
DROP INDEX memory_fulltext IF EXISTS;
