"""The write path: write-behind jobs, the enrichment worker and its batches, the changes
every write announces, and the one embedding model per tenant."""
