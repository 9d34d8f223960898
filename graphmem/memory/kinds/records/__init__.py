"""Structured records: their schemas, what a schema costs to check, and the bounded check."""
