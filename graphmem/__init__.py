"""graphmem: graph-centric knowledge memory for AI agents.

from graphmem import MemoryBuilder, load_settings
memory = MemoryBuilder.from_settings(load_settings()).build()
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graphmem.memory import AddMemory, Memory, RecallQuery
    from graphmem.memory.builder import MemoryBuilder
    from graphmem.settings import MemoryConfig, Settings, load_settings

# Loaded on first use, so that `graphmem.client` (httpx only) does not pull in the
# server: Neo4j's driver, Redis, pydantic and the models.
_WHERE = {
    "AddMemory": ".memory",
    "Memory": ".memory",
    "RecallQuery": ".memory",
    "MemoryBuilder": ".memory.builder",
    "MemoryConfig": ".settings",
    "Settings": ".settings",
    "load_settings": ".settings",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(import_module(_WHERE[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "AddMemory",
    "Memory",
    "MemoryBuilder",
    "MemoryConfig",
    "RecallQuery",
    "Settings",
    "load_settings",
]
__version__ = "0.1.0"
