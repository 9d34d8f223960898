"""GraphQL types of DESIGN.md section 4, and their conversion from the domain models."""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

import strawberry
from strawberry.scalars import JSON

from .. import models
from ..entities import EntityType
from ..episodes import StepStatus
from ..events import EventKind
from ..manager import MemoryKind
from ..models import MemoryType, Tier
from ..retrieval import Retriever
from ..settings import MemoryConfig

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
        )


@strawberry.type
class HotTierStatus:
    items: int
    tokens: int
    limit: int
    utilization_percent: float


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
    similarity: float = strawberry.field(description="Cosine similarity to the query, 0-1")


@strawberry.type
class ScoredMemory:
    item: MemoryItem
    score: float = strawberry.field(description="Ranking score (fused for HYBRID)")
    similarity: float = strawberry.field(description="Cosine similarity to the query, 0-1")

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


strawberry.enum(EntityType, name="EntityType")


@strawberry.type(description="A person, organisation, place ... mentioned in memories")
class Entity:
    id: strawberry.ID = strawberry.field(description="The resolution key, TYPE|normalised name")
    name: str
    type: str
    aliases: list[str] = strawberry.field(description="Surface forms seen for it")
    mention_count: int
    first_seen: datetime | None
    last_seen: datetime | None
    merged_from: list[strawberry.ID] = strawberry.field(
        description="Entities merged into this one (undo with undoMerge)"
    )

    @classmethod
    def of(cls, e: dict[str, Any]) -> Entity:
        return cls(
            id=strawberry.ID(e["key"]),
            name=e["name"],
            type=e["type"],
            aliases=list(e.get("aliases") or []),
            mention_count=int(e.get("mentionCount") or 0),
            first_seen=to_datetime(e.get("firstSeen")),
            last_seen=to_datetime(e.get("lastSeen")),
            merged_from=[strawberry.ID(k) for k in e.get("mergedFrom") or []],
        )


def to_datetime(value: Any) -> datetime | None:
    """neo4j.time.DateTime (or None, or a datetime) → datetime."""
    if value is None:
        return None
    to_native = getattr(value, "to_native", None)
    return to_native() if to_native else value  # type: ignore[no-any-return]


@strawberry.type(description="An entity as one user mentioned it")
class UserEntity:
    entity: Entity
    count: int
    first_seen: datetime | None
    last_seen: datetime | None


@strawberry.type
class EntityMention:
    memory_id: strawberry.ID
    content: str
    surface: str
    via: str = strawberry.field(description="exact, normalised, alias or split")
    created_at: datetime | None
    user_id: strawberry.ID | None


@strawberry.type(description="A relation to another entity; closed when validUntil is set")
class EntityRelation:
    type: str
    direction: str = strawberry.field(description="out: this entity is the subject")
    other_id: strawberry.ID
    other_name: str
    valid_from: datetime | None
    valid_until: datetime | None
    sources: list[strawberry.ID] = strawberry.field(description="Memories asserting it")
    closed_by: strawberry.ID | None = strawberry.field(description="Memory that closed it")


@strawberry.type
class CoOccurrence:
    other_id: strawberry.ID
    weight: int


@strawberry.type
class EntityDetail:
    entity: Entity
    mentions: list[EntityMention]
    relations: list[EntityRelation]
    cooccurring: list[CoOccurrence]

    @classmethod
    def of(cls, d: dict[str, Any]) -> EntityDetail:
        return cls(
            entity=Entity.of(d["entity"]),
            mentions=[
                EntityMention(
                    memory_id=strawberry.ID(m["memoryId"]),
                    content=m["content"],
                    surface=m["surface"],
                    via=m.get("via") or "exact",
                    created_at=to_datetime(m.get("createdAt")),
                    user_id=strawberry.ID(m["userId"]) if m.get("userId") else None,
                )
                for m in d["mentions"]
            ],
            relations=[
                EntityRelation(
                    type=r["type"],
                    direction=r["direction"],
                    other_id=strawberry.ID(r["other"]),
                    other_name=r["otherName"],
                    valid_from=to_datetime(r.get("validFrom")),
                    valid_until=to_datetime(r.get("validUntil")),
                    sources=[strawberry.ID(s) for s in r.get("sources") or []],
                    closed_by=strawberry.ID(r["closedBy"]) if r.get("closedBy") else None,
                )
                for r in d["outgoing"] + d["incoming"]
            ],
            cooccurring=[
                CoOccurrence(other_id=strawberry.ID(c["other"]), weight=int(c["weight"] or 0))
                for c in d["cooccurring"]
            ],
        )


@strawberry.type
class MergeResult:
    merge_id: strawberry.ID
    source_id: strawberry.ID
    target_id: strawberry.ID


strawberry.enum(StepStatus, name="StepStatus")


@strawberry.type
class Step:
    id: strawberry.ID
    action: str
    result: str | None
    status: StepStatus
    order: int
    started_at: datetime | None
    ended_at: datetime | None
    owner: str | None = strawberry.field(description="The handle's owner that wrote it")
    generation: int | None = strawberry.field(description="The handle's generation")

    @classmethod
    def of(cls, s: dict[str, Any]) -> Step:
        return cls(
            id=strawberry.ID(s["id"]),
            action=s["action"],
            result=s.get("result"),
            status=StepStatus(s["status"]),
            order=int(s["order"]),
            started_at=to_datetime(s.get("startedAt")),
            ended_at=to_datetime(s.get("endedAt")),
            owner=s.get("owner"),
            generation=s.get("generation"),
        )


@strawberry.type(description="One hand-over of a task (seed 001's transfer audit trail)")
class Transfer:
    from_owner: str | None
    to_owner: str
    from_generation: int
    to_generation: int
    reason: str | None
    at: datetime | None

    @classmethod
    def of(cls, x: dict[str, Any]) -> Transfer:
        return cls(
            from_owner=x.get("fromOwner"),
            to_owner=x["toOwner"],
            from_generation=int(x["fromGeneration"]),
            to_generation=int(x["toGeneration"]),
            reason=x.get("reason") or None,
            at=to_datetime(x.get("at")),
        )


@strawberry.type(description="Who may write a task's steps now")
class TaskHandle:
    task_id: strawberry.ID
    owner: str | None
    generation: int


@strawberry.type
class Task:
    id: strawberry.ID
    description: str
    status: str
    owner: str | None
    generation: int
    created_at: datetime | None
    completed_at: datetime | None
    steps: list[Step]
    episode_ids: list[strawberry.ID]
    transfers: list[Transfer]

    @classmethod
    def of(
        cls,
        t: dict[str, Any],
        steps: list[dict[str, Any]] | None = None,
        episodes: list[str] | None = None,
        transfers: list[dict[str, Any]] | None = None,
    ) -> Task:
        return cls(
            id=strawberry.ID(t["id"]),
            description=t["description"],
            status=t["status"],
            owner=t.get("owner"),
            generation=int(t.get("generation") or 1),
            created_at=to_datetime(t.get("createdAt")),
            completed_at=to_datetime(t.get("completedAt")),
            steps=[Step.of(s) for s in steps or []],
            episode_ids=[strawberry.ID(e) for e in episodes or []],
            transfers=[Transfer.of(x) for x in transfers or []],
        )


@strawberry.type
class Episode:
    id: strawberry.ID
    task_id: strawberry.ID
    description: str | None
    outcome: str
    success: bool
    signature: str | None
    lessons: list[str]
    metrics: JSON
    mappings: JSON
    created_at: datetime | None

    @classmethod
    def of(cls, e: dict[str, Any]) -> Episode:
        return cls(
            id=strawberry.ID(e["id"]),
            task_id=strawberry.ID(e["taskId"]),
            description=e.get("description"),
            outcome=e["outcome"],
            success=bool(e["success"]),
            signature=e.get("signature"),
            lessons=list(e.get("lessons") or []),
            metrics=cast(JSON, e.get("metrics") or {}),
            mappings=cast(JSON, e.get("mappings") or {}),
            created_at=to_datetime(e.get("createdAt")),
        )


@strawberry.type
class ScoredEpisode:
    episode: Episode
    similarity: float = strawberry.field(description="cosine, plus the signature boost")
    cosine: float
    signature_match: bool

    @classmethod
    def of(cls, row: dict[str, Any]) -> ScoredEpisode:
        return cls(
            episode=Episode.of(row["episode"]),
            similarity=float(row["similarity"]),
            cosine=float(row["cosine"]),
            signature_match=bool(row["signatureMatch"]),
        )


@strawberry.type(description="The winning value for one key, by similarity-weighted votes")
class MappingVote:
    key: str
    value: str
    confidence: float = strawberry.field(description="The winner's share of the votes, 0-1")
    votes: float
    alternatives: JSON = strawberry.field(description="Every value with its vote total")


@strawberry.type
class PriorKnowledge:
    votes: list[MappingVote]
    episodes: list[ScoredEpisode]


@strawberry.type
class Reflection:
    id: strawberry.ID
    kind: str = strawberry.field(description="recovery, repeated_failure, success_rate or summary")
    pattern: str
    support: int
    confidence: float
    signature: str | None
    details: JSON
    evidence: list[strawberry.ID] = strawberry.field(description="Episodes it derives from")

    @classmethod
    def of(cls, r: dict[str, Any]) -> Reflection:
        return cls(
            id=strawberry.ID(r["id"]),
            kind=r["kind"],
            pattern=r["pattern"],
            support=int(r["support"]),
            confidence=float(r["confidence"]),
            signature=r.get("signature"),
            details=cast(JSON, r.get("details") or {}),
            evidence=[strawberry.ID(e) for e in sorted(r.get("evidence") or [])],
        )


@strawberry.input
class StepInput:
    action: str
    result: str | None = None
    status: StepStatus = StepStatus.SUCCEEDED


@strawberry.input
class EpisodeInput:
    outcome: str
    success: bool
    task_id: strawberry.ID | None = None
    description: str | None = None
    steps: list[StepInput] | None = None
    signature: str | None = None
    structure: list[str] | None = strawberry.field(
        default=None, description="Names (columns, fields) to derive the signature from"
    )
    lessons: list[str] | None = None
    metrics: JSON | None = None
    mappings: JSON | None = strawberry.field(
        default=None, description="key → value choices that priorKnowledge votes on"
    )


strawberry.enum(MemoryKind, name="MemoryKind")


@strawberry.type(description="One message of a session's short-term history")
class Message:
    role: str
    content: str
    timestamp: str

    @classmethod
    def of(cls, m: dict[str, Any]) -> Message:
        return cls(role=m["role"], content=m["content"], timestamp=m["timestamp"])


@strawberry.type(description="An agent persona: configured traits plus learned ones")
class Persona:
    agent_id: strawberry.ID
    role: str
    tone: str
    expertise: list[str]
    constraints: list[str]
    learned_traits: list[ScoredMemory]
    prompt: str
    source: str = strawberry.field(description="stored (set through the API) or configured")

    @classmethod
    def of(cls, p: dict[str, Any]) -> Persona:
        return cls(
            agent_id=strawberry.ID(p["agentId"]),
            role=p["role"],
            tone=p["tone"],
            expertise=p["expertise"],
            constraints=p["constraints"],
            learned_traits=[ScoredMemory.of(s) for s in p["learned"]],
            prompt=p["prompt"],
            source=p["source"],
        )


@strawberry.input
class PersonaInput:
    role: str
    tone: str = ""
    expertise: list[str] = strawberry.field(default_factory=list)
    constraints: list[str] = strawberry.field(default_factory=list)


@strawberry.type(description="A structured record, validated against its JSON schema")
class Record:
    id: strawberry.ID
    schema: str
    data: JSON
    created_at: datetime | None

    @classmethod
    def of(cls, r: dict[str, Any]) -> Record:
        return cls(
            id=strawberry.ID(r["id"]),
            schema=r["schema"],
            data=cast(JSON, r["data"]),
            created_at=to_datetime(r.get("createdAt")),
        )


@strawberry.input(description="What to remember and where (seed 003's MemoryManager.add)")
class RememberInput:
    kind: MemoryKind
    content: str | None = None
    session_id: strawberry.ID | None = None
    user_id: strawberry.ID | None = None
    task_id: strawberry.ID | None = None
    agent_id: strawberry.ID | None = None
    type: MemoryType | None = None
    role: str | None = strawberry.field(default=None, description="short_term: user, assistant ...")
    key: str | None = strawberry.field(default=None, description="working: the key to set")
    value: JSON | None = strawberry.field(default=None, description="working: the value")
    schema: str | None = strawberry.field(default=None, description="structured: schema name")
    data: JSON | None = strawberry.field(default=None, description="structured: the record")
    success: bool | None = strawberry.field(default=None, description="episodic: the outcome")


@strawberry.type
class RememberResult:
    kind: MemoryKind
    memory_id: strawberry.ID | None = None
    episode_id: strawberry.ID | None = None
    record_id: strawberry.ID | None = None
    message: Message | None = None
    working: JSON | None = None


@strawberry.type(description="What each memory type holds for a query (MemoryManager.retrieve)")
class Retrieved:
    working: JSON | None = None
    short_term: list[Message] | None = None
    long_term: list[ScoredMemory] | None = None
    persona: Persona | None = None
    episodic: list[ScoredEpisode] | None = None
    entities: list[UserEntity] | None = None
    structured: list[Record] | None = None


@strawberry.type
class ForgetUserResult:
    hot_memories: int
    graph_memories: int
    sessions: int
    entities: int = strawberry.field(
        description="Entities removed because nobody else mentions them"
    )


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
