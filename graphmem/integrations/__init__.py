"""Adapters from agent frameworks to graphmem's API (each an optional extra)."""
