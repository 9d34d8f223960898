"""Stores backed by Redis: the hot tier and short-term conversation history."""
