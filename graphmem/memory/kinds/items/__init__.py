"""LangGraph store items: JSON values by (namespace, key), written in one atomic graph
operation and searched under a namespace prefix (docs/integrations.md#langgraph-store)."""
