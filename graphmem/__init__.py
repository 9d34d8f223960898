"""graphmem: graph-centric knowledge memory for AI agents.

from graphmem import MemoryBuilder, load_settings
memory = MemoryBuilder.from_settings(load_settings()).build()
"""

from .builder import MemoryBuilder
from .memory import AddMemory, Memory, RecallQuery
from .settings import MemoryConfig, Settings, load_settings

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
