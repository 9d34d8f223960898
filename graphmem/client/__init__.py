"""A Python client for graphmem's GraphQL API, on httpx (and websockets for the change
feed). It knows nothing of the server's code: it speaks only the API.

    from graphmem.client import Graphmem

    with Graphmem("http://127.0.0.1:8000", key) as gm:
        item = gm.add("demo", "The budget is $50K", type="FACT")
        gm.spill("demo")
        print(gm.recall("what was the budget?", session_id="demo").items[0].content)
"""

from graphmem.client.aio import AsyncGraphmem
from graphmem.client.erasure import (
    ErasureReceipt,
    Forgotten,
    ReceiptPage,
    RecordsForgotten,
    TaskForgotten,
)
from graphmem.client.errors import (
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
from graphmem.client.items import StoreItem, item_put
from graphmem.client.knowledge import MappingVote, PriorKnowledge, StructuredRecord
from graphmem.client.models import (
    At,
    Enrichment,
    Episode,
    Event,
    ImportedTask,
    MemoryItem,
    MemoryPage,
    RecallResult,
    ScoredEpisode,
    ScoredMemory,
    SpillResult,
    Status,
    Step,
    Task,
    TaskHandle,
    TaskPage,
    TierStatus,
    UserEntity,
)
from graphmem.client.operations import memory_input as memory
from graphmem.client.sync import Graphmem
from graphmem.client.transport import Retry

__all__ = [
    "AsyncGraphmem",
    "At",
    "BadInput",
    "Enrichment",
    "Episode",
    "ErasureReceipt",
    "Event",
    "Forbidden",
    "Forgotten",
    "Graphmem",
    "GraphmemError",
    "ImportedTask",
    "Internal",
    "MappingVote",
    "MemoryItem",
    "MemoryPage",
    "NotFound",
    "PriorKnowledge",
    "QuotaExceeded",
    "RateLimited",
    "RecallResult",
    "ReceiptPage",
    "RecordsForgotten",
    "Retry",
    "ScoredEpisode",
    "ScoredMemory",
    "SpillResult",
    "Status",
    "Step",
    "StoreItem",
    "StructuredRecord",
    "Task",
    "TaskForgotten",
    "TaskHandle",
    "TaskPage",
    "TierStatus",
    "Unauthenticated",
    "Unavailable",
    "UserEntity",
    "item_put",
    "memory",
]
