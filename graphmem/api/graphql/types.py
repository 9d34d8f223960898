"""GraphQL types of memories, tiers, recall and the change feed, and their conversion from
the domain models. Entity and episodic memory's types are in ``entity_types.py``; the
memory router's in ``kind_types.py``."""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

import strawberry
from strawberry.scalars import JSON

from graphmem.api.graphql.erasure_types import ErasureReceipt
from graphmem.api.graphql.moments import AS_OF, HISTORY, VALID_AT
from graphmem.domain import models
from graphmem.domain.models import EventKind, MemoryType, Tier
from graphmem.memory.search.fusion import Retriever
from graphmem.memory.tiers import listing
from graphmem.settings import MemoryConfig

# Registers the domain enums as GraphQL enums (strawberry annotates the class in place).
strawberry.enum(MemoryType, name="MemoryType")
strawberry.enum(Tier, name="Tier")


@strawberry.type(description="One memory, in whichever tier holds it now.")
class MemoryItem:
    id: strawberry.ID
    session_id: strawberry.ID
    user_id: strawberry.ID | None
    content: str
    type: MemoryType
    tier: Tier
    access_count: int
    last_accessed_at: datetime
    created_at: datetime
    relevance_score: float
    token_count: int
    metadata: JSON
    recorded_at: datetime = strawberry.field(
        description="When graphmem learned it (record time; `createdAt` is when it "
        "happened). A memory stored before both clocks were kept reports its createdAt."
    )
    retracted_at: datetime | None = strawberry.field(
        default=None, description="When it was retracted; null while it is held"
    )
    retract_reason: str | None = None

    @classmethod
    def of(cls, item: models.MemoryItem) -> MemoryItem:
        return cls(
            id=strawberry.ID(item.id),
            session_id=strawberry.ID(item.session_id),
            user_id=strawberry.ID(item.user_id) if item.user_id else None,
            content=item.content,
            type=item.type,
            tier=item.tier,
            access_count=item.access_count,
            last_accessed_at=item.last_accessed_at,
            created_at=item.created_at,
            relevance_score=item.relevance_score,
            token_count=item.token_count,
            metadata=cast(JSON, item.metadata),
            recorded_at=item.recorded,
            retracted_at=item.retracted_at,
            retract_reason=item.retract_reason,
        )


@strawberry.type(description="One page of memories in conversation order.")
class MemoryPage:
    items: list[MemoryItem]
    next: str | None = strawberry.field(
        description="Pass as `after` for the next page; null after the last. A page can "
        "hold fewer items than asked (some filtered out) and still have a next one."
    )

    @classmethod
    def of(cls, page: listing.MemoryPage) -> MemoryPage:
        return cls(items=[MemoryItem.of(i) for i in page.items], next=page.next)


@strawberry.type
class HotTierStatus:
    items: int
    tokens: int
    limit: int
    utilization_percent: float
    enriched: int = strawberry.field(
        description="Hot items an enrichment worker has already written into the graph with "
        "their vectors and entities (search finds the others by their words until then)"
    )


@strawberry.type(description="This tenant's write-behind progress.")
class EnrichmentStatus:
    enabled: bool = strawberry.field(
        description="Whether adds are written behind by enrichment workers at all"
    )
    waiting: int = strawberry.field(
        description="This tenant's memories waiting for their vectors and entities (search "
        "finds them by their words meanwhile)"
    )
    parked: int = strawberry.field(
        description="This tenant's memories in jobs set aside after failing too often "
        "(found by their words only; an operator sees why with `graphmem worker --parked`)"
    )
    workers: int = strawberry.field(
        description="Enrichment workers alive, over all tenants (0: nothing is processed)"
    )

    @classmethod
    def of(cls, s: models.EnrichmentStatus) -> EnrichmentStatus:
        return cls(enabled=s.enabled, waiting=s.waiting, parked=s.parked, workers=s.workers)


@strawberry.type
class TierStatus:
    items: int
    tokens: int


@strawberry.type
class MemorySuggestion:
    type: str = strawberry.field(description="spill, recall or prune")
    reason: str
    item_ids: list[strawberry.ID]


@strawberry.type
class MemoryStatus:
    session_id: strawberry.ID
    hot: HotTierStatus
    warm: TierStatus
    cold: TierStatus
    suggestions: list[MemorySuggestion]

    @classmethod
    def of(cls, s: models.MemoryStatus) -> MemoryStatus:
        return cls(
            session_id=strawberry.ID(s.session_id),
            hot=HotTierStatus(
                items=s.hot.items,
                tokens=s.hot.tokens,
                limit=s.hot.limit,
                utilization_percent=s.hot.utilization_percent,
                enriched=s.hot.enriched,
            ),
            warm=TierStatus(items=s.warm.items, tokens=s.warm.tokens),
            cold=TierStatus(items=s.cold.items, tokens=s.cold.tokens),
            suggestions=[
                MemorySuggestion(
                    type=g.type, reason=g.reason, item_ids=[strawberry.ID(i) for i in g.item_ids]
                )
                for g in s.suggestions
            ],
        )


@strawberry.type
class SpillResult:
    spilled_count: int
    spilled_ids: list[strawberry.ID]
    target_tier: Tier
    warm_ids: list[strawberry.ID]
    cold_ids: list[strawberry.ID]

    @classmethod
    def of(cls, r: models.SpillResult) -> SpillResult:
        return cls(
            spilled_count=r.spilled_count,
            spilled_ids=[strawberry.ID(i) for i in r.spilled_ids],
            target_tier=r.target_tier,
            warm_ids=[strawberry.ID(i) for i in r.warm_ids],
            cold_ids=[strawberry.ID(i) for i in r.cold_ids],
        )


strawberry.enum(Retriever, name="Retriever")


@strawberry.type
class ItemScore:
    item_id: strawberry.ID
    score: float = strawberry.field(description="Ranking score (fused for HYBRID)")
    similarity: float = strawberry.field(
        description="Cosine similarity to the query on the relevance scale, 0-1"
    )


@strawberry.type
class ScoredMemory:
    item: MemoryItem
    score: float = strawberry.field(description="Ranking score (fused for HYBRID)")
    similarity: float = strawberry.field(
        description="Cosine similarity to the query on the relevance scale, 0-1"
    )

    @classmethod
    def of(cls, s: models.ScoredMemory) -> ScoredMemory:
        return cls(item=MemoryItem.of(s.item), score=s.score, similarity=s.similarity)


@strawberry.type
class RecallResult:
    items: list[MemoryItem] = strawberry.field(description="Warm and cold matches, best first")
    promoted: list[strawberry.ID] = strawberry.field(description="Ids moved into the hot tier")
    scores: list[ItemScore]
    hot_hits: list[ScoredMemory] = strawberry.field(
        description="Items already hot in the session that match the query"
    )

    @classmethod
    def of(cls, r: models.RecallResult) -> RecallResult:
        return cls(
            items=[MemoryItem.of(i) for i in r.items],
            promoted=[strawberry.ID(i) for i in r.promoted],
            scores=[
                ItemScore(item_id=strawberry.ID(s.item.id), score=s.score, similarity=s.similarity)
                for s in r.scores
            ],
            hot_hits=[ScoredMemory.of(h) for h in r.hot_hits],
        )


@strawberry.type(description="The tier settings in force for one session")
class SessionConfig:
    session_id: strawberry.ID
    hot_token_limit: int
    warm_access_threshold: int
    promote_threshold: float
    max_cold_items: int
    auto_spill_enabled: bool
    auto_promote_enabled: bool
    spill_count: int

    @classmethod
    def of(cls, session_id: str, c: MemoryConfig) -> SessionConfig:
        return cls(
            session_id=strawberry.ID(session_id),
            hot_token_limit=c.hot_token_limit,
            warm_access_threshold=c.warm_access_threshold,
            promote_threshold=c.promote_threshold,
            max_cold_items=c.max_cold_items,
            auto_spill_enabled=c.auto_spill_enabled,
            auto_promote_enabled=c.auto_promote_enabled,
            spill_count=c.spill_count,
        )


@strawberry.input(description="Per-session overrides; a null field resets it to the default")
class SessionConfigInput:
    hot_token_limit: int | None = strawberry.UNSET
    warm_access_threshold: int | None = strawberry.UNSET
    promote_threshold: float | None = strawberry.UNSET
    max_cold_items: int | None = strawberry.UNSET
    auto_spill_enabled: bool | None = strawberry.UNSET
    auto_promote_enabled: bool | None = strawberry.UNSET
    spill_count: int | None = strawberry.UNSET

    def overrides(self) -> dict[str, Any]:
        return {name: value for name, value in vars(self).items() if value is not strawberry.UNSET}


@strawberry.input
class AddMemoryInput:
    session_id: strawberry.ID
    content: str
    type: MemoryType = MemoryType.MESSAGE
    user_id: strawberry.ID | None = None
    metadata: JSON | None = strawberry.field(
        default=None, description="A JSON object; returned exactly as given"
    )
    occurred_at: datetime | None = strawberry.field(
        default=None, description="When it happened; defaults to now"
    )

    def to_spec(self) -> dict[str, Any]:
        return {
            "session_id": str(self.session_id),
            "user_id": str(self.user_id) if self.user_id is not None else None,
            "content": self.content,
            "type": self.type,
            "metadata": self.metadata if self.metadata is not None else {},
            "occurred_at": self.occurred_at,
        }


@strawberry.input
class RecallInput:
    query: str
    session_id: strawberry.ID | None = None
    user_id: strawberry.ID | None = None
    limit: int = 3
    auto_promote: bool = True
    types: list[MemoryType] | None = None
    retriever: Retriever = Retriever.HYBRID
    as_of: datetime | None = strawberry.field(default=None, description=AS_OF)
    valid_at: datetime | None = strawberry.field(default=None, description=VALID_AT)
    include_history: bool = strawberry.field(default=False, description=HISTORY)


@strawberry.type
class ForgetUserResult:
    hot_memories: int
    graph_memories: int
    sessions: int
    entities: int = strawberry.field(
        description="Entities removed because nobody else mentions them"
    )
    messages: int = strawberry.field(description="short-term messages of their sessions removed")
    receipt: ErasureReceipt
    tasks: int = strawberry.field(default=0, description="tasks they held (owner) removed")


@strawberry.input(description="A retention policy; at least one of the three rules")
class PrunePolicyInput:
    tiers: list[Tier] | None = strawberry.field(default=None, description="default WARM, COLD")
    types: list[MemoryType] | None = None
    session_id: strawberry.ID | None = None
    user_id: strawberry.ID | None = None
    older_than_seconds: float | None = None
    keep_newest: int | None = strawberry.field(default=None, description="per session")
    max_bytes_per_session: int | None = None

    def to_policy(self) -> dict[str, Any]:
        policy: dict[str, Any] = {
            "types": self.types,
            "session_id": str(self.session_id) if self.session_id else None,
            "user_id": str(self.user_id) if self.user_id else None,
            "older_than_seconds": self.older_than_seconds,
            "keep_newest": self.keep_newest,
            "max_bytes_per_session": self.max_bytes_per_session,
        }
        if self.tiers is not None:
            policy["tiers"] = self.tiers
        return policy


@strawberry.type
class PruneResult:
    dry_run: bool
    count: int = strawberry.field(description="Memories the policy selects")
    bytes: int
    ids: list[strawberry.ID]
    removed: int = strawberry.field(description="Memories deleted (0 on a dry run)")


@strawberry.type(description="Items, tokens and content bytes of one tier and type")
class TierTypeStats:
    tier: Tier
    type: MemoryType
    items: int
    tokens: int
    bytes: int


strawberry.enum(EventKind, name="EventKind")


@strawberry.input(description="Which events to deliver; empty fields match everything")
class EventFilter:
    kinds: list[EventKind] | None = None
    session_id: strawberry.ID | None = None
    user_id: strawberry.ID | None = None

    def matches(self, event: dict[str, Any]) -> bool:
        if self.kinds and EventKind(event["kind"]) not in self.kinds:
            return False
        if self.session_id is not None and event.get("sessionId") != str(self.session_id):
            return False
        return self.user_id is None or event.get("userId") == str(self.user_id)


@strawberry.type(description="Something that happened to the tenant's memory")
class MemoryEvent:
    kind: EventKind
    at: str
    session_id: strawberry.ID | None
    user_id: strawberry.ID | None
    item_ids: list[strawberry.ID]
    data: JSON = strawberry.field(description="The rest of the event (ids, tiers, owners ...)")

    @classmethod
    def of(cls, e: dict[str, Any]) -> MemoryEvent:
        rest = {
            k: v for k, v in e.items() if k not in ("kind", "at", "sessionId", "userId", "itemIds")
        }
        return cls(
            kind=EventKind(e["kind"]),
            at=e["at"],
            session_id=strawberry.ID(e["sessionId"]) if e.get("sessionId") else None,
            user_id=strawberry.ID(e["userId"]) if e.get("userId") else None,
            item_ids=[strawberry.ID(i) for i in e.get("itemIds") or []],
            data=cast(JSON, rest),
        )
