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


class TaskMark(StoreModel):
    """forgetTask's first step (``erasure/task_tombstone``): whether the handle given is
    the task's (and the tombstones were written), and the task's handle."""

    held: bool
    owner: str | None = None
    generation: int = 1
    import_id: str | None = None
    tombstones: int = 0


class TaskCounts(StoreModel):
    """What the graph holds of forgotten tasks (``erasure/task_counts``)."""

    tasks: int = 0
    steps: int = 0
    transfers: int = 0
    episodes: int = 0
    reflections: int = 0
    #: tasks and episodes with an embedding: their vector entries
    embedded: int = 0
    relationships: int = 0
    #: the ids and keys the second look asks for again, once the task is gone
    step_ids: list[str] = Field(default_factory=list)
    reflection_keys: list[str] = Field(default_factory=list)


class RecordCounts(StoreModel):
    """Records found by id and their relationships (``erasure/records_counts``)."""

    found: list[str] = Field(default_factory=list)
    relationships: int = 0
