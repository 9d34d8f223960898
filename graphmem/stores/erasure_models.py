"""What the graph's erasure store returns (``protocols_kinds.GraphErasure``)."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from graphmem.stores.models import StoreModel


class SubjectCounts(StoreModel):
    """What the graph holds of an erasure's subject (``erasure/subject_counts``)."""

    memories: int = 0
    #: memories with an embedding: their entries in the vector indexes
    embedded: int = 0
    #: memories with the tenant's fulltext label: their entries in its fulltext index
    fulltext: int = 0
    mentions: int = 0
    #: HAS_MEMORY relationships into the memories
    held: int = 0
    #: every relationship of the memories
    edges: int = 0
    users: int = 0
    #: the user's MENTIONED relationships
    mentioned: int = 0
    session_nodes: int = 0
    #: the sessions the subject's memories are in (and the user's), at most a bound
    session_ids: list[str] = Field(default_factory=list)


class StoredReceipt(StoreModel):
    id: str
    #: the signed receipt, as canonical JSON text
    document: str
    at: datetime
