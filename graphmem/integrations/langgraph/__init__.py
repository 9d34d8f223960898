"""LangGraph's ``BaseStore`` over graphmem: ``pip install 'graphmem[langgraph]'``.

    from graphmem.integrations.langgraph import GraphmemStore

    with GraphmemStore("http://127.0.0.1:8000", key) as store:
        store.put(("users", "ada", "prefs"), "food", {"text": "likes pizza"})
        store.search(("users", "ada"), query="what does she eat?")

Items are graphmem store items keyed by (namespace, key): docs/integrations.md.
"""

from graphmem.integrations.langgraph.store import GraphmemStore

__all__ = ["GraphmemStore"]
