"""Enrichment: token counts, embeddings (and, later, entities) computed locally."""
