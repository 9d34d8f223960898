"""What the stores return: typed rows for entities, tasks and episodes, personas and records.

Field names are the Python spelling of the Cypher keys; ``neo4j/records.py`` and
``neo4j/records_kinds.py`` are the places that map one to the other.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from graphmem.domain.models import MemoryItem
from graphmem.stores.memoryrows import RECORDED_EVER, RETRACTED_EVER, MemoryRows

#: (memory id, session id, user id or None): where a memory lives
Located = tuple[str, str | None, str | None]


class StoreModel(BaseModel):
    model_config = ConfigDict(frozen=True)


# --- entities ---------------------------------------------------------------------------
class Entity(StoreModel):
    #: the resolution key, ``TYPE|normalised name``
    key: str
    name: str
    type: str
    aliases: list[str] = Field(default_factory=list)
    mention_count: int = 0
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    merged_from: list[str] = Field(default_factory=list)


class EntityMention(StoreModel):
    memory_id: str
    content: str
    surface: str
    #: how the surface form was resolved: exact, normalised, alias or split
    via: str = "exact"
    created_at: datetime | None = None
    user_id: str | None = None


class EntityRelation(StoreModel):
    type: str
    #: ``out`` when the entity is the subject, ``in`` when it is the object
    direction: str
    other: str
    other_name: str
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    sources: list[str] = Field(default_factory=list)
    closed_by: str | None = None
    #: record time: when graphmem learned the relation, and when it learned of its end
    #: (None on relations written before both clocks were kept)
    recorded_at: datetime | None = None
    closed_at: datetime | None = None


class CoOccurrence(StoreModel):
    other: str
    weight: int = 0


class EntityDetail(StoreModel):
    """An entity with what its merged members add: mentions, relations, co-occurrences."""

    entity: Entity
    mentions: list[EntityMention] = Field(default_factory=list)
    outgoing: list[EntityRelation] = Field(default_factory=list)
    incoming: list[EntityRelation] = Field(default_factory=list)
    cooccurring: list[CoOccurrence] = Field(default_factory=list)


class UserEntity(StoreModel):
    """An entity as one user mentioned it."""

    entity: Entity
    count: int
    first_seen: datetime | None = None
    last_seen: datetime | None = None


class AliasRule(StoreModel):
    """One row of a tenant's resolution table; ``kind`` is ``alias`` or ``split``."""

    alias: str
    canonical: str
    kind: str


class MergeResult(StoreModel):
    merge_id: str
    source: str
    target: str


# --- tasks and episodes -----------------------------------------------------------------
class Task(StoreModel):
    id: str
    description: str
    status: str
    owner: str | None = None
    generation: int = 1
    created_at: datetime | None = None
    completed_at: datetime | None = None


class Step(StoreModel):
    id: str
    action: str
    result: str | None = None
    status: str
    order: int
    started_at: datetime | None = None
    ended_at: datetime | None = None
    owner: str | None = None
    generation: int | None = None


class TaskDetail(StoreModel):
    task: Task
    #: in the order they were added
    steps: list[Step] = Field(default_factory=list)
    episodes: list[str] = Field(default_factory=list)


class Transfer(StoreModel):
    from_owner: str | None = None
    to_owner: str
    from_generation: int
    to_generation: int
    reason: str | None = None
    at: datetime | None = None


class TransferOutcome(StoreModel):
    #: False when the handle was stale; owner and generation are then the current ones
    moved: bool
    owner: str | None
    generation: int


class Episode(StoreModel):
    id: str
    task_id: str
    description: str | None = None
    outcome: str
    success: bool
    signature: str | None = None
    lessons: list[str] = Field(default_factory=list)
    metrics: dict[str, Any] = Field(default_factory=dict)
    mappings: dict[str, Any] = Field(default_factory=dict)
    #: valid time: when it happened (the moment it was recorded, or the exported one)
    created_at: datetime | None = None
    #: record time: when this graphmem learned of it
    recorded_at: datetime | None = None


class OwnedTask(StoreModel):
    """A task with everything that hangs off it: what an export of its owner writes."""

    task: Task
    steps: list[Step] = Field(default_factory=list)
    transfers: list[Transfer] = Field(default_factory=list)
    episodes: list[Episode] = Field(default_factory=list)


class ScoredEpisode(StoreModel):
    episode: Episode
    similarity: float
    cosine: float
    signature_match: bool


class EpisodeSteps(StoreModel):
    episode: Episode
    steps: list[Step] = Field(default_factory=list)


class Reflection(StoreModel):
    id: str
    kind: str
    pattern: str
    support: int
    confidence: float
    signature: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)
    evidence: list[str] = Field(default_factory=list)
    #: when it was first found; reflect updates it in place after that
    recorded_at: datetime | None = None


# --- short-term, personas, records ------------------------------------------------------
class Message(StoreModel):
    role: str
    content: str
    #: ISO 8601, as it was written
    timestamp: str


class StoredRecord(StoreModel):
    id: str
    #: the record as JSON text (Neo4j properties cannot hold maps)
    data: str
    created_at: datetime | None = None
    recorded_at: datetime | None = None


# --- enrichment -------------------------------------------------------------------------
class Enriched(StoreModel):
    """What enrichment computed for a hot item, cached beside it in Redis so that its
    spill writes it instead of computing it again."""

    vector: list[float]
    #: packed float16 sentence vectors (enrich/sentences.py); None for one sentence
    sentences: bytes | None = None
    #: its entity mentions are already in the graph
    entities: bool = False


class EnrichmentJob(StoreModel):
    """One entry of the enrichment stream: items of one session to write behind."""

    entry: str
    tenant: str
    session_id: str
    ids: list[str]
    #: deliveries so far, this one included (a job that keeps failing is parked)
    attempt: int = 1
    #: whether its items are in the tenant's waiting count (queued by this version)
    counted: bool = True
    #: whether its items are in the tenant's share of the stream (queued through the
    #: fair queue: ``stores/redis/queue.py``)
    placed: bool = False


class QueueStats(StoreModel):
    #: jobs added and not yet acknowledged (read or not)
    backlog: int
    #: jobs read by a worker and not yet acknowledged
    pending: int
    #: jobs set aside after failing too often, with their error
    parked: int
    #: age of the oldest job not yet acknowledged, in seconds (0 when there is none)
    oldest_seconds: float


# --- memories written and removed ------------------------------------------------------
@dataclass(frozen=True)
class TextAnalysis:
    """What search reads of a memory's text without reading the text: its stems' hashes,
    uint32 little-endian (``enrich/lexical.py``), for BM25 with a scope's own statistics,
    and who said it (``enrich/sentences.speaker``), for a question that names them.
    ``version``: the analysis that made them (``lexical.VERSION``)."""

    terms: bytes
    speaker: str | None
    version: int


@dataclass(frozen=True)
class GraphMemory:
    """A memory on its way into the graph: the item (its tier is the one written), its
    vector and packed float16 sentence vectors when computed (``enrich/sentences.py``;
    None for one sentence), and its text's analysis."""

    item: MemoryItem
    analysis: TextAnalysis
    embedding: list[float] | None = None
    sentences: bytes | None = None


@dataclass(frozen=True)
class MemoryVectors:
    """A memory's vectors, set on a node that exists."""

    id: str
    embedding: list[float]
    #: packed float16 sentence vectors (``enrich/sentences.pack``); None for one sentence
    sentences: bytes | None


@dataclass(frozen=True)
class Removed:
    """Memories deleted from the graph: how many, the keys of the entities they mentioned
    (their counts need a refresh), and where each of them lived."""

    removed: int = 0
    keys: list[str] = field(default_factory=list)
    located: list[Located] = field(default_factory=list)


@dataclass(frozen=True)
class UserRemoved(Removed):
    """A user's memories deleted, and how many of their sessions were left empty and
    removed with them."""

    sessions: int = 0


# --- scope versions ---------------------------------------------------------------------
@dataclass(frozen=True)
class ScopeRead:
    """A search scope's version as Redis holds it now, and what changed in the scope
    since the version the reader held: the ids (empty when nothing did), or None when
    that is not known (another epoch, or further back than the log reaches)."""

    epoch: str
    version: str
    changed: frozenset[str] | None


class ScopeTooLarge(Exception):
    """A whole-scope read found the scope at or over the cap it was given."""


__all__ = ["RECORDED_EVER", "RETRACTED_EVER", "MemoryRows"]
