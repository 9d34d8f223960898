"""What the client's methods return: plain frozen dataclasses read from GraphQL JSON."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any


def _time(value: Any) -> datetime | None:
    return datetime.fromisoformat(value) if isinstance(value, str) else None


@dataclass(frozen=True)
class MemoryItem:
    id: str
    session_id: str
    user_id: str | None
    content: str
    type: str
    tier: str
    access_count: int
    token_count: int
    relevance_score: float
    created_at: datetime | None
    metadata: dict[str, Any]
    #: record time: when graphmem learned it, and when it was retracted (and why)
    recorded_at: datetime | None = None
    retracted_at: datetime | None = None
    retract_reason: str | None = None

    FIELDS = (
        "id sessionId userId content type tier accessCount tokenCount relevanceScore"
        " createdAt metadata recordedAt retractedAt retractReason"
    )

    @classmethod
    def of(cls, d: dict[str, Any]) -> MemoryItem:
        return cls(
            d["id"],
            d["sessionId"],
            d.get("userId"),
            d["content"],
            d["type"],
            d["tier"],
            d["accessCount"],
            d["tokenCount"],
            d["relevanceScore"],
            _time(d.get("createdAt")),
            d.get("metadata") or {},
            _time(d.get("recordedAt")),
            _time(d.get("retractedAt")),
            d.get("retractReason"),
        )


@dataclass(frozen=True)
class MemoryPage:
    items: list[MemoryItem]
    #: ``after`` for the next page; None after the last
    next: str | None

    FIELDS = f"items {{ {MemoryItem.FIELDS} }} next"

    @classmethod
    def of(cls, d: dict[str, Any]) -> MemoryPage:
        return cls([MemoryItem.of(i) for i in d["items"]], d.get("next"))


@dataclass(frozen=True)
class SpillResult:
    spilled_ids: list[str]
    target_tier: str
    warm_ids: list[str]
    cold_ids: list[str]

    FIELDS = "spilledIds targetTier warmIds coldIds"

    @classmethod
    def of(cls, d: dict[str, Any]) -> SpillResult:
        return cls(d["spilledIds"], d["targetTier"], d["warmIds"], d["coldIds"])


@dataclass(frozen=True)
class ScoredMemory:
    item: MemoryItem
    score: float
    similarity: float

    FIELDS = f"item {{ {MemoryItem.FIELDS} }} score similarity"

    @classmethod
    def of(cls, d: dict[str, Any]) -> ScoredMemory:
        return cls(MemoryItem.of(d["item"]), d["score"], d["similarity"])


@dataclass(frozen=True)
class RecallResult:
    items: list[MemoryItem]
    promoted: list[str]
    #: item id → ranking score
    scores: dict[str, float]

    FIELDS = f"items {{ {MemoryItem.FIELDS} }} promoted scores {{ itemId score }}"

    @classmethod
    def of(cls, d: dict[str, Any]) -> RecallResult:
        return cls(
            [MemoryItem.of(i) for i in d["items"]],
            d["promoted"],
            {s["itemId"]: s["score"] for s in d["scores"]},
        )


@dataclass(frozen=True)
class TierStatus:
    items: int
    tokens: int


@dataclass(frozen=True)
class Status:
    session_id: str
    hot: TierStatus
    hot_limit: int
    warm: TierStatus
    cold: TierStatus
    #: (type, reason) of each suggestion
    suggestions: list[tuple[str, str]]

    FIELDS = (
        "sessionId hot { items tokens limit } warm { items tokens } cold { items tokens }"
        " suggestions { type reason }"
    )

    @classmethod
    def of(cls, d: dict[str, Any]) -> Status:
        return cls(
            d["sessionId"],
            TierStatus(d["hot"]["items"], d["hot"]["tokens"]),
            d["hot"]["limit"],
            TierStatus(d["warm"]["items"], d["warm"]["tokens"]),
            TierStatus(d["cold"]["items"], d["cold"]["tokens"]),
            [(s["type"], s["reason"]) for s in d["suggestions"]],
        )


@dataclass(frozen=True)
class Enrichment:
    """The tenant's write-behind progress (the ``enrichment`` query)."""

    enabled: bool
    waiting: int
    parked: int
    workers: int

    FIELDS = "enabled waiting parked workers"

    @classmethod
    def of(cls, d: dict[str, Any]) -> Enrichment:
        return cls(d["enabled"], d["waiting"], d["parked"], d["workers"])


@dataclass(frozen=True)
class UserEntity:
    id: str
    name: str
    type: str
    #: how often this user mentioned it
    count: int
    last_seen: datetime | None

    FIELDS = "entity { id name type } count lastSeen"

    @classmethod
    def of(cls, d: dict[str, Any]) -> UserEntity:
        e = d["entity"]
        return cls(e["id"], e["name"], e["type"], d["count"], _time(d.get("lastSeen")))


@dataclass(frozen=True)
class Step:
    id: str
    action: str
    result: str | None
    status: str
    order: int

    FIELDS = "id action result status order"

    @classmethod
    def of(cls, d: dict[str, Any]) -> Step:
        return cls(d["id"], d["action"], d.get("result"), d["status"], d["order"])


@dataclass(frozen=True)
class Task:
    id: str
    description: str
    status: str
    owner: str | None
    generation: int
    steps: list[Step]

    FIELDS = f"id description status owner generation steps {{ {Step.FIELDS} }}"

    @classmethod
    def of(cls, d: dict[str, Any]) -> Task:
        steps = [Step.of(s) for s in d["steps"]]
        return cls(d["id"], d["description"], d["status"], d.get("owner"), d["generation"], steps)


@dataclass(frozen=True)
class TaskHandle:
    task_id: str
    owner: str | None
    generation: int

    FIELDS = "taskId owner generation"

    @classmethod
    def of(cls, d: dict[str, Any]) -> TaskHandle:
        return cls(d["taskId"], d.get("owner"), d["generation"])


@dataclass(frozen=True)
class Episode:
    id: str
    task_id: str
    outcome: str
    success: bool
    signature: str | None
    lessons: list[str]
    metrics: dict[str, Any]
    mappings: dict[str, Any]
    #: valid time (when it happened) and record time (when graphmem learned of it)
    created_at: datetime | None = None
    recorded_at: datetime | None = None

    FIELDS = "id taskId outcome success signature lessons metrics mappings createdAt recordedAt"

    @classmethod
    def of(cls, d: dict[str, Any]) -> Episode:
        return cls(
            d["id"],
            d["taskId"],
            d["outcome"],
            d["success"],
            d.get("signature"),
            d["lessons"],
            d["metrics"] or {},
            d["mappings"] or {},
            _time(d.get("createdAt")),
            _time(d.get("recordedAt")),
        )


@dataclass(frozen=True)
class ScoredEpisode:
    episode: Episode
    #: the cosine on the relevance scale, plus the boost of an exact signature match
    similarity: float

    FIELDS = f"episode {{ {Episode.FIELDS} }} similarity"

    @classmethod
    def of(cls, d: dict[str, Any]) -> ScoredEpisode:
        return cls(Episode.of(d["episode"]), d["similarity"])


@dataclass(frozen=True)
class Event:
    kind: str
    at: str
    session_id: str | None
    user_id: str | None
    item_ids: list[str]
    data: dict[str, Any]

    FIELDS = "kind at sessionId userId itemIds data"

    @classmethod
    def of(cls, d: dict[str, Any]) -> Event:
        return cls(
            d["kind"], d["at"], d.get("sessionId"), d.get("userId"), d["itemIds"], d["data"] or {}
        )


@dataclass(frozen=True)
class TaskPage:
    """Tasks an owner holds, each as ``importTask`` takes it back (``importId`` is the
    task's id here): what ``graphmem export`` writes."""

    items: list[dict[str, Any]]
    #: ``after`` for the next page; None after the last
    next: str | None

    FIELDS = (
        "next items { task { id description status owner generation createdAt completedAt "
        "steps { action result status order startedAt endedAt owner generation } "
        "transfers { fromOwner toOwner fromGeneration toGeneration reason at } } "
        "episodes { description outcome success signature lessons metrics mappings createdAt "
        "recordedAt } }"
    )

    @classmethod
    def of(cls, d: dict[str, Any]) -> TaskPage:
        items = []
        for owned in d["items"]:
            task = dict(owned["task"])
            items.append({"importId": task.pop("id"), **task, "episodes": owned["episodes"]})
        return cls(items, d.get("next"))


@dataclass(frozen=True)
class ImportedTask:
    task: Task
    #: False when an earlier import wrote it (it is left as it was)
    created: bool

    FIELDS = f"created task {{ {Task.FIELDS} }}"

    @classmethod
    def of(cls, d: dict[str, Any]) -> ImportedTask:
        return cls(Task.of(d["task"]), bool(d["created"]))


@dataclass(frozen=True)
class At:
    """The moment a read looks at (docs/concepts.md, "Two clocks"): ``as_of`` what
    graphmem held then (record time), ``valid_at`` what was true then (valid time),
    ``include_history`` retracted memories and closed relations too."""

    as_of: datetime | None = None
    valid_at: datetime | None = None
    include_history: bool = False

    #: the variables' declarations and the arguments, for a document's read
    DECLS = "$asOf: DateTime, $validAt: DateTime, $hist: Boolean"
    ARGS = "asOf: $asOf, validAt: $validAt, includeHistory: $hist"

    def variables(self) -> dict[str, Any]:
        return {
            "asOf": self.as_of.isoformat() if self.as_of else None,
            "validAt": self.valid_at.isoformat() if self.valid_at else None,
            "hist": self.include_history,
        }
