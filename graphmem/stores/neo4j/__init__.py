"""Stores backed by Neo4j: memories, entities, tasks and episodes, personas and records."""
