"""Erasure with a receipt, and no resurrection (docs/concepts.md#erasure)."""
