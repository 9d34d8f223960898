"""Domain models shared by the capabilities, the stores and the API layer."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: the model of every vector written before tenants recorded theirs (the only one then)
LEGACY_EMBEDDING_MODEL = "all-MiniLM-L6-v2-onnx-int8"


@dataclass(frozen=True)
class EmbeddingSpace:
    """The model that made a set of vectors, and their dimensions: vectors of two spaces
    are never compared (docs/recall.md, "One model per tenant")."""

    model: str
    dimensions: int

    @classmethod
    def of(cls, embedder: Any) -> EmbeddingSpace:
        """An embedder's space (``enrich.embed.Embedder``: its name and dimension)."""
        return cls(str(embedder.name), int(embedder.dimension))

    def params(self) -> dict[str, Any]:
        return {"model": self.model, "dimensions": self.dimensions}


class MemoryType(StrEnum):
    MESSAGE = "message"
    FACT = "fact"
    DECISION = "decision"
    ENTITY = "entity"
    CONTEXT = "context"
    PREFERENCE = "preference"


class Tier(StrEnum):
    HOT = "hot"
    WARM = "warm"
    COLD = "cold"


class EventKind(StrEnum):
    """What happened, as the change feed tells its subscribers."""

    ADDED = "added"
    SPILLED = "spilled"
    PROMOTED = "promoted"
    RECALLED = "recalled"
    FORGOTTEN = "forgotten"
    ENTITY_MERGED = "entity_merged"
    TASK_TRANSFERRED = "task_transferred"
    RETRACTED = "retracted"
    RESTORED = "restored"
    #: LangGraph store items (``data.items``: their namespaces and keys)
    ITEMS_PUT = "items_put"
    ITEMS_DELETED = "items_deleted"
    #: the knowledge graph of the MCP memory-server tools (``data``: names, relations)
    KG_ENTITIES_CREATED = "kg_entities_created"
    KG_ENTITIES_DELETED = "kg_entities_deleted"
    KG_RELATIONS_CREATED = "kg_relations_created"
    KG_RELATIONS_DELETED = "kg_relations_deleted"
    KG_OBSERVATIONS_ADDED = "kg_observations_added"
    KG_OBSERVATIONS_DELETED = "kg_observations_deleted"


def utcnow() -> datetime:
    return datetime.now(UTC)


#: the widest offset a Neo4j DateTime holds; the driver sends only whole minutes
MAX_OFFSET = timedelta(hours=18)


def as_utc(v: datetime) -> datetime:
    """A time as graphmem stores it: one without a zone is read as UTC (docs/api.md), as
    a naive time could not be compared with the aware ones every other node carries;
    ValueError when Neo4j could not hold it: outside years 1-9999 in UTC (Python's
    range, narrower than Neo4j's), or an offset beyond ±18:00 or not in whole minutes
    (a Neo4j server refuses the first, the driver the second, and either would fail
    every spill of the item's session)."""
    aware = v if v.tzinfo is not None else v.replace(tzinfo=UTC)
    offset = aware.utcoffset()
    if offset is not None and abs(offset) > MAX_OFFSET:
        raise ValueError("the time zone offset must be between -18:00 and +18:00")
    if offset is not None and offset % timedelta(minutes=1):
        raise ValueError("the time zone offset must be whole minutes")
    try:
        aware.astimezone(UTC)
    except OverflowError as exc:
        raise ValueError("outside years 1-9999 once converted to UTC") from exc
    return aware


def scope_token(tenant: str) -> str:
    """A single alphanumeric token standing for the tenant in the fulltext index."""
    return "tn" + hashlib.sha1(tenant.encode("utf-8")).hexdigest()[:20]


def tenant_fulltext(tenant: str) -> tuple[str, str]:
    """The tenant's own fulltext index and the node label it covers. A hex hash of the
    tenant id: schema commands cannot take parameters, and this never carries input."""
    digest = hashlib.sha256(tenant.encode("utf-8")).hexdigest()[:24]
    return f"memory_fulltext_{digest}", f"MemoryOf_{digest}"


def tenant_item_fulltext(tenant: str) -> tuple[str, str]:
    """The fulltext index over the tenant's LangGraph store items and their label
    (``tenant_fulltext``'s hash, another prefix)."""
    digest = hashlib.sha256(tenant.encode("utf-8")).hexdigest()[:24]
    return f"item_fulltext_{digest}", f"ItemsOf_{digest}"


def tenant_vector_index(tenant: str) -> str:
    """The tenant's own vector index, once it is large (over the label of
    ``tenant_fulltext``)."""
    return f"memory_vector_{tenant_fulltext(tenant)[0].removeprefix('memory_fulltext_')}"


def _scoped(prefix: str, tenant: str, name: str) -> str:
    return prefix + hashlib.sha1(f"{tenant}\x1f{name}".encode()).hexdigest()[:20]


def scope_tokens(tenant: str, session_id: str | None = None, user_id: str | None = None) -> str:
    """The tokens a memory carries in the fulltext index's ``scopeToken`` field: the
    tenant's, plus its session's and user's. Lucene then ranks inside the scope;
    filtering after a tenant-wide top-k would leave a user of a large tenant with a
    handful of BM25 hits."""
    return " ".join([scope_token(tenant), *_narrowing(tenant, session_id, user_id)])


def query_scope_tokens(
    tenant: str, session_id: str | None = None, user_id: str | None = None
) -> str:
    """The tokens a search must require: its session's and user's, not the tenant's.
    Every index is the tenant's own (``tenant_fulltext``) and text_hits re-checks the
    tenant, so the tenant's token filters nothing; as a required clause it still made
    Lucene walk a posting list as long as the tenant (6.8 against 3.7 ms for a
    tenant-wide search of 100,000 memories)."""
    return " ".join(_narrowing(tenant, session_id, user_id))


def _narrowing(tenant: str, session_id: str | None, user_id: str | None) -> list[str]:
    """The session's and the user's tokens, those given."""
    tokens = []
    if session_id is not None:
        tokens.append(_scoped("ss", tenant, session_id))
    if user_id is not None:
        tokens.append(_scoped("us", tenant, user_id))
    return tokens


def content_hash(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


class MemoryItem(BaseModel):
    """One memory, wherever it lives. ``embedding`` is filled on the way to the graph."""

    model_config = ConfigDict(extra="ignore")

    id: str
    tenant: str
    session_id: str
    user_id: str | None = None
    content: str
    type: MemoryType
    tier: Tier = Tier.HOT
    access_count: int = 0
    last_accessed_at: datetime
    created_at: datetime
    relevance_score: float = 1.0
    token_count: int
    content_hash: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    #: conversation order within the session (a nanosecond clock at add time): the
    #: neighbouring turns recall uses as context
    seq: int = 0
    #: when graphmem learned it (record time; ``created_at`` is when it happened, the
    #: ``occurredAt`` it was added with). None on memories stored before the two clocks:
    #: ``recorded`` stands in with ``created_at``
    recorded_at: datetime | None = None
    #: when it stopped being held, and why (``retract``); None while it is held
    retracted_at: datetime | None = None
    retract_reason: str | None = None
    #: why the graph refused this hot item, once a spill found it could not be written
    #: (an item stored before the edge checks): spills pass it by (memory/tiers/spill.py).
    #: Kept out of the item's JSON while unset, so most items carry nothing extra.
    parked: str | None = Field(default=None, exclude=True)

    @field_validator("created_at", "last_accessed_at", "recorded_at", "retracted_at", mode="after")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        if value is None:
            return None
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)

    @property
    def recorded(self) -> datetime:
        """Record time: ``recorded_at``, else ``created_at`` (a memory stored before
        graphmem kept both clocks; docs/concepts.md, "Two clocks")."""
        return self.recorded_at or self.created_at

    def to_json(self) -> str:
        doc = self.model_dump_json()
        if self.parked is None:
            return doc
        parked = {**json.loads(doc), "parked": self.parked}
        return json.dumps(parked, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, raw: str | bytes) -> MemoryItem:
        return cls.model_validate_json(raw)


def to_datetime(value: Any) -> datetime:
    """A Neo4j ``DateTime`` (or a datetime, or ISO 8601 text) as an aware Python datetime:
    the one conversion every reader of the graph uses. A value without a time zone (a
    ``LocalDateTime`` written by hand, or before inputs were checked) is read as UTC, so
    comparisons with aware times never fail."""
    if isinstance(value, datetime):
        native = value
    elif (to_native := getattr(value, "to_native", None)) is not None:  # neo4j.time types
        native = to_native()
        if not isinstance(native, datetime):
            raise ValueError(f"not a date and time: {value!r}")
    else:
        # ISO text as Cypher's toString writes it, maybe with a zone name after the offset
        native = datetime.fromisoformat(str(value).split("[", 1)[0])
    return native if native.tzinfo is not None else native.replace(tzinfo=UTC)


class TierCount(BaseModel):
    items: int = 0
    tokens: int = 0


class HotStatus(TierCount):
    limit: int
    utilization_percent: float
    #: hot items an enrichment worker has written behind with their vectors and entities
    enriched: int = 0


class Suggestion(BaseModel):
    type: str  # spill | recall | prune
    reason: str
    item_ids: list[str] = Field(default_factory=list)


class MemoryStatus(BaseModel):
    session_id: str
    hot: HotStatus
    warm: TierCount
    cold: TierCount
    suggestions: list[Suggestion]


class EnrichmentStatus(BaseModel):
    """A tenant's write-behind progress (docs/recall.md#visibility)."""

    #: whether adds are written behind by enrichment workers at all
    enabled: bool
    #: the tenant's memories on the enrichment queue: findable by their words, not yet
    #: by their meaning (no vector yet) nor linked to their entities
    waiting: int = 0
    #: the tenant's memories in jobs that failed too often and were set aside
    parked: int = 0
    #: enrichment workers alive (a heartbeat in the last 10 s), over all tenants
    workers: int = 0


class SpillResult(BaseModel):
    spilled_count: int
    spilled_ids: list[str]
    #: the tier most of the batch went to; per-item tiers are on the items themselves
    target_tier: Tier
    warm_ids: list[str] = Field(default_factory=list)
    cold_ids: list[str] = Field(default_factory=list)


class ScoredMemory(BaseModel):
    item: MemoryItem
    #: the ranking score (fused across retrievers for hybrid recall)
    score: float
    #: cosine similarity of the memory to the query, in [0, 1]
    similarity: float = 0.0


class RecallResult(BaseModel):
    items: list[MemoryItem]
    promoted: list[str]
    scores: list[ScoredMemory]
    hot_hits: list[ScoredMemory] = Field(default_factory=list)
