"""What the memory kinds beside the tiers need from their stores.

``EntityStore``, ``EpisodeStore``, ``ProfileStore`` and ``ConversationStore`` are what
entity, episodic, persona/structured and short-term memory need; ``WorkingStore`` holds a
task's working memory; ``KnowledgeStore`` the agent-curated graph of the MCP
memory-server tools. The graph holds the first three and the last (``neo4j/``), Redis the other two
(``redis/conversation.py``, ``redis/working.py``). They return the typed models of
``stores/models.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from graphmem.domain.knowledge import (
    KGEntity,
    KGPageEntity,
    KGRelation,
    KGSubgraph,
    ObservationsAdded,
    RelationsCreated,
)
from graphmem.domain.models import EmbeddingSpace
from graphmem.domain.moments import Moment
from graphmem.settings import PersonaConfig
from graphmem.stores.erasure_models import (
    RecordCounts,
    StoredReceipt,
    SubjectCounts,
    TaskCounts,
    TaskMark,
)
from graphmem.stores.models import (
    AliasRule,
    EntityDetail,
    Episode,
    EpisodeSteps,
    Located,
    MergeResult,
    Message,
    OwnedTask,
    Reflection,
    ScoredEpisode,
    Step,
    StoredRecord,
    Task,
    TaskDetail,
    Transfer,
    TransferOutcome,
    UserEntity,
)
from graphmem.stores.models_items import (
    ItemText,
    ItemTextHits,
    ItemVector,
    ItemWrite,
    StoredItem,
)


@runtime_checkable
class EntityStore(Protocol):
    async def resolution_table(self, tenant: str) -> list[AliasRule]: ...
    async def write(
        self,
        tenant: str,
        mentions: Sequence[dict[str, Any]],
        relations: Sequence[dict[str, Any]],
        pairs: Sequence[dict[str, Any]],
    ) -> None: ...
    async def refresh(self, tenant: str, keys: Sequence[str]) -> int: ...
    async def user_entities(
        self,
        tenant: str,
        user_id: str,
        entity_type: str | None,
        limit: int,
        moment: Moment = ...,
    ) -> list[UserEntity]: ...
    async def get(self, tenant: str, key: str, moment: Moment = ...) -> EntityDetail | None: ...
    async def merge(
        self, tenant: str, source: str, target: str, merge_id: str, reason: str, now: datetime
    ) -> MergeResult | None: ...
    async def undo_merge(self, tenant: str, merge_id: str) -> MergeResult | None: ...
    async def find_by_name(self, tenant: str, norm: str) -> list[str]: ...
    async def set_alias(
        self, tenant: str, alias: str, canonical: str, kind: str, now: datetime
    ) -> None: ...
    async def split(
        self, tenant: str, key: str, surface: str, new_key: str, name: str, now: datetime
    ) -> bool: ...


@runtime_checkable
class KnowledgeStore(Protocol):
    """The knowledge graph of the MCP memory-server tools. Every write is one
    transaction: a call that reports ``missing`` or ``full`` wrote nothing. ``limit``s
    are what the caller will keep: stores return one more when there is more, so the
    caller can tell the list was cut."""

    async def create_entities(
        self, tenant: str, entities: Sequence[KGEntity], call_id: str, now: datetime
    ) -> list[KGEntity]: ...
    async def create_relations(
        self, tenant: str, relations: Sequence[KGRelation], call_id: str, now: datetime
    ) -> RelationsCreated: ...
    async def add_observations(
        self, tenant: str, adds: Sequence[tuple[str, Sequence[str]]], cap: int, now: datetime
    ) -> ObservationsAdded: ...
    async def delete_entities(self, tenant: str, names: Sequence[str]) -> int: ...
    async def delete_observations(
        self, tenant: str, deletions: Sequence[tuple[str, Sequence[str]]], now: datetime
    ) -> int: ...
    async def delete_relations(self, tenant: str, relations: Sequence[KGRelation]) -> int: ...
    async def page(self, tenant: str, after: str | None, limit: int) -> list[KGPageEntity]: ...
    async def relations_from(
        self, tenant: str, names: Sequence[str], limit: int
    ) -> list[KGRelation]: ...
    async def names_present(self, tenant: str, names: Sequence[str]) -> set[str]: ...
    async def search(
        self, tenant: str, lowered: str, limit: int, relation_limit: int
    ) -> KGSubgraph: ...
    async def open(self, tenant: str, names: Sequence[str], relation_limit: int) -> KGSubgraph: ...


@runtime_checkable
class EpisodeStore(Protocol):
    async def create_task(
        self,
        tenant: str,
        task_id: str,
        description: str,
        owner: str | None,
        embedding: Sequence[float],
        now: datetime,
        model: str,
    ) -> Task: ...
    async def add_step(self, tenant: str, task_id: str, step: dict[str, Any]) -> Step | None: ...
    async def complete_task(
        self, tenant: str, task_id: str, status: str, now: datetime
    ) -> Task | None: ...
    async def transfer(
        self, tenant: str, task_id: str, transfer: dict[str, Any]
    ) -> TransferOutcome | None: ...
    async def transfers(self, tenant: str, task_id: str) -> list[Transfer]: ...
    async def get_task(self, tenant: str, task_id: str) -> TaskDetail | None: ...
    async def owned_tasks(
        self, tenant: str, owner: str, after: str | None, limit: int
    ) -> list[OwnedTask]: ...
    async def import_task(self, tenant: str, task: dict[str, Any]) -> tuple[Task, bool] | None: ...
    async def record_episode(self, tenant: str, episode: dict[str, Any]) -> Episode | None: ...
    async def similar(
        self,
        tenant: str,
        embedding: Sequence[float],
        signature: str | None,
        boost: float,
        limit: int,
        space: EmbeddingSpace,
        moment: Moment = ...,
        scale: tuple[float, float] = ...,
    ) -> list[ScoredEpisode]: ...
    async def with_steps(self, tenant: str, signature: str | None) -> list[EpisodeSteps]: ...
    async def upsert_reflection(
        self, tenant: str, reflection: dict[str, Any]
    ) -> Reflection | None: ...
    async def reflections(
        self, tenant: str, kind: str | None, signature: str | None
    ) -> list[Reflection]: ...


@runtime_checkable
class WorkingStore(Protocol):
    async def set(
        self, tenant: str, task_id: str, key: str, value: str, max_bytes: int, ttl: int
    ) -> dict[str, Any] | None: ...
    async def get(self, tenant: str, task_id: str) -> dict[str, Any]: ...
    async def clear(self, tenant: str, task_id: str) -> None: ...
    async def seal(self, tenant: str, task_id: str, ttl: int) -> int: ...


@runtime_checkable
class ProfileStore(Protocol):
    async def persona(self, tenant: str, agent_id: str) -> PersonaConfig | None: ...
    async def set_persona(
        self, tenant: str, agent_id: str, persona: PersonaConfig, now: datetime
    ) -> PersonaConfig: ...
    async def set_schema(self, tenant: str, name: str, schema: str, now: datetime) -> None: ...
    async def schema(self, tenant: str, name: str) -> str | None: ...
    async def add_record(
        self,
        tenant: str,
        schema: str,
        record_id: str,
        data: str,
        fields: dict[str, Any],
        now: datetime,
    ) -> datetime | None: ...
    async def records(
        self,
        tenant: str,
        schema: str,
        where: dict[str, Any],
        limit: int,
        as_of: datetime | None = None,
    ) -> list[StoredRecord]: ...


@runtime_checkable
class ConversationStore(Protocol):
    async def append(self, tenant: str, session_id: str, message: Message, ttl: int) -> int: ...
    async def last(self, tenant: str, session_id: str, n: int) -> list[Message]: ...
    async def clear(self, tenant: str, session_id: str) -> int: ...
    async def count(self, tenant: str, session_id: str) -> int: ...


@runtime_checkable
class GraphErasure(Protocol):
    """Erasure in the graph (``graphmem/memory/erasure/``): tombstones every memory write
    checks, what the graph holds of a subject, a session's removal, the receipts' log."""

    async def tombstone(
        self, tenant: str, kind: str, subjects: Sequence[str], at: datetime, expires_at: datetime
    ) -> int: ...
    async def tombstones(
        self, tenant: str, kind: str, subjects: Sequence[str]
    ) -> dict[str, datetime]: ...
    async def expired_tenants(self, now: datetime, limit: int = 1000) -> list[str]: ...
    async def expire_tombstones(self, tenant: str, now: datetime, limit: int = 1000) -> int: ...
    async def counts(
        self,
        tenant: str,
        user_id: str | None = None,
        session_id: str | None = None,
        ids: Sequence[str] = (),
    ) -> SubjectCounts: ...
    async def forget_session(
        self, tenant: str, session_id: str
    ) -> tuple[int, list[str], list[Located], int]: ...
    async def user_items(self, tenant: str, user_id: str) -> int: ...
    async def forget_user_items(self, tenant: str, user_id: str) -> int: ...
    async def add_receipt(
        self,
        tenant: str,
        receipt_id: str,
        at: datetime,
        kind: str,
        user_id: str | None,
        session_id: str | None,
        document: str,
        imported: bool = False,
    ) -> bool: ...
    async def receipts(
        self,
        tenant: str,
        user_id: str | None,
        before: tuple[datetime, str] | None,
        limit: int,
    ) -> list[StoredReceipt]: ...


@runtime_checkable
class KindErasure(Protocol):
    """Erasure of the kinds beside memories (``graphmem/memory/erasure/kinds.py``): a
    task with its parts (steps, hand-overs, episodes, reflections drawn from them), the
    tasks a user holds, records by id. Tombstones and receipts are ``GraphErasure``'s."""

    async def mark_task(
        self,
        tenant: str,
        task_id: str,
        owner: str | None,
        generation: int | None,
        at: datetime,
        expires_at: datetime,
        check_handle: bool = True,
    ) -> TaskMark | None: ...
    async def task_counts(
        self,
        tenant: str,
        task_ids: Sequence[str],
        step_ids: Sequence[str] = (),
        reflection_keys: Sequence[str] = (),
    ) -> TaskCounts: ...
    async def remove_task(self, tenant: str, task_id: str) -> dict[str, int]: ...
    async def user_tasks(self, tenant: str, user_id: str, limit: int) -> list[str]: ...
    async def record_counts(self, tenant: str, ids: Sequence[str]) -> RecordCounts: ...
    async def remove_records(self, tenant: str, ids: Sequence[str]) -> tuple[int, int]: ...


@runtime_checkable
class ItemStore(Protocol):
    """LangGraph store items (``memory/kinds/items``), each keyed by (tenant, path, key)."""

    async def write(
        self, tenant: str, writes: Sequence[ItemWrite], now: datetime, model: str
    ) -> int: ...
    async def get(
        self, tenant: str, keys: Sequence[tuple[str, str]]
    ) -> list[StoredItem | None]: ...
    async def page(self, tenant: str, prefix: str, skip: int, first: int) -> list[StoredItem]: ...
    async def scan(
        self, tenant: str, prefix: str, after_path: str, after_key: str, first: int
    ) -> list[StoredItem]: ...
    async def text_hits(
        self, tenant: str, prefix: str, lucene: str | None, k: int, cap: int, chars: int
    ) -> ItemTextHits: ...
    async def vector_hits(
        self, tenant: str, prefix: str, vector: list[float], model: str, k: int, cap: int
    ) -> list[StoredItem]: ...
    async def paths(self, tenant: str, prefix: str, after: str, first: int) -> list[str]: ...
    async def pending_hits(
        self, tenant: str, prefix: str, cap: int, chars: int
    ) -> list[tuple[StoredItem, str]]: ...
    async def vectors_due(
        self, tenant: str, before: datetime, first: int, chars: int
    ) -> list[ItemText]: ...
    async def set_vectors(
        self, tenant: str, rows: Sequence[ItemVector], model: str, chars: int
    ) -> int: ...
    async def vector_tenants(self, before: datetime, first: int) -> list[str]: ...
