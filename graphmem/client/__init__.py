"""A Python client for graphmem's GraphQL API, on httpx (and websockets for the change
feed). It knows nothing of the server's code: it speaks only the API.

    from graphmem.client import Graphmem

    with Graphmem("http://127.0.0.1:8000", key) as gm:
        item = gm.add("demo", "The budget is $50K", type="FACT")
        gm.spill("demo")
        print(gm.recall("what was the budget?", session_id="demo").items[0].content)
"""

from .aio import AsyncGraphmem
from .errors import (
    BadInput,
    Forbidden,
    GraphmemError,
    Internal,
    NotFound,
    QuotaExceeded,
    RateLimited,
    Unauthenticated,
    Unavailable,
)
from .models import (
    Enrichment,
    Event,
    MemoryItem,
    MemoryPage,
    RecallResult,
    ScoredMemory,
    SpillResult,
    Status,
    Step,
    Task,
    TierStatus,
    UserEntity,
)
from .operations import memory_input as memory
from .sync import Graphmem
from .transport import Retry

__all__ = [
    "AsyncGraphmem",
    "BadInput",
    "Enrichment",
    "Event",
    "Forbidden",
    "Graphmem",
    "GraphmemError",
    "Internal",
    "MemoryItem",
    "MemoryPage",
    "NotFound",
    "QuotaExceeded",
    "RateLimited",
    "RecallResult",
    "Retry",
    "ScoredMemory",
    "SpillResult",
    "Status",
    "Step",
    "Task",
    "TierStatus",
    "Unauthenticated",
    "Unavailable",
    "UserEntity",
    "memory",
]
