"""The GraphQL schema: thin resolvers that hand the caller's tenant to the service."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any, cast

import strawberry
from graphql.error import GraphQLError
from strawberry.scalars import JSON
from strawberry.types import ExecutionContext, ExecutionResult, Info

from ..entities import EntityMemory, EntityType
from ..episodes import EpisodicMemory
from ..errors import BadInput, Unavailable
from ..events import EventBus
from ..manager import MemoryKind, MemoryManager
from ..memory import Memory, RecallQuery
from ..models import MemoryType, Tier
from ..retrieval import Retriever
from ..settings import PersonaConfig
from .entity_types import (
    EntityDetail,
    Episode,
    EpisodeInput,
    MappingVote,
    MergeResult,
    PriorKnowledge,
    Reflection,
    ScoredEpisode,
    Step,
    StepInput,
    Task,
    TaskHandle,
    UserEntity,
)
from .errors import TypedErrors, typed_error
from .guard import DocumentGuard, Limits
from .kind_types import (
    Message,
    Persona,
    PersonaInput,
    Record,
    RememberInput,
    RememberResult,
    Retrieved,
)
from .types import (
    AddMemoryInput,
    EventFilter,
    ForgetUserResult,
    MemoryEvent,
    MemoryItem,
    MemoryStatus,
    PrunePolicyInput,
    PruneResult,
    RecallInput,
    RecallResult,
    ScoredMemory,
    SessionConfig,
    SessionConfigInput,
    SpillResult,
    TierTypeStats,
)


def _s(value: strawberry.ID | None) -> str | None:
    return str(value) if value is not None else None


def _id(value: Any) -> strawberry.ID | None:
    return strawberry.ID(str(value)) if value is not None else None


def _ctx(info: Info[Any, Any]) -> tuple[Memory, str]:
    return info.context["service"], info.context["tenant"]


def _manager(info: Info[Any, Any]) -> tuple[MemoryManager, str]:
    service, tenant = _ctx(info)
    if service.manager is None:
        raise Unavailable("the memory-type stores are not configured")
    return service.manager, tenant


def _episodes(info: Info[Any, Any]) -> tuple[EpisodicMemory, str]:
    service, tenant = _ctx(info)
    if service.episodes is None:
        raise Unavailable("episodic memory is not configured")
    return service.episodes, tenant


def _mapping(value: Any, field: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise BadInput(f"{field}: an object of string values is required", field=field)
    return value


def _entities(info: Info[Any, Any]) -> tuple[EntityMemory, str]:
    service, tenant = _ctx(info)
    if service.entities is None:
        raise Unavailable("entity memory is switched off (GRAPHMEM_ENTITIES_ENABLED=false)")
    return service.entities, tenant


@strawberry.type
class Query:
    @strawberry.field(description="The session's hot tier, newest first.")
    async def hot(self, info: Info[Any, Any], session_id: strawberry.ID) -> list[MemoryItem]:
        service, tenant = _ctx(info)
        return [MemoryItem.of(i) for i in await service.reports.hot_items(tenant, str(session_id))]

    @strawberry.field(
        description="One memory by id: the hot tier first, then the graph (seed 000's "
        "cascading read; promotes it when the promote_on_read rule is on)."
    )
    async def memory(self, info: Info[Any, Any], item_id: strawberry.ID) -> MemoryItem | None:
        service, tenant = _ctx(info)
        item = await service.promotion.get(tenant, str(item_id))
        return MemoryItem.of(item) if item else None

    @strawberry.field(description="A user's entities, most recently mentioned first.")
    async def entities(
        self,
        info: Info[Any, Any],
        user_id: strawberry.ID,
        type: EntityType | None = None,
        limit: int = 50,
    ) -> list[UserEntity]:
        entities, tenant = _entities(info)
        rows = await entities.user_entities(
            tenant, str(user_id), type.value if type else None, limit
        )
        return [UserEntity.of(r) for r in rows]

    @strawberry.field(description="One entity with its mentions and relations (open and closed).")
    async def entity(self, info: Info[Any, Any], id: strawberry.ID) -> EntityDetail:
        entities, tenant = _entities(info)
        return EntityDetail.of(await entities.get(tenant, str(id)))

    @strawberry.field(description="A task with its steps in order and its episodes.")
    async def task(self, info: Info[Any, Any], id: strawberry.ID) -> Task:
        episodes, tenant = _episodes(info)
        found = await episodes.task(tenant, str(id))
        transfers = await episodes.transfers(tenant, str(id))
        return Task.of(found.task, found.steps, found.episodes, transfers)

    @strawberry.field(
        description="Episodes like the query, by cosine similarity plus a boost of 0.6 for "
        "an exact structure-signature match (seed 002)."
    )
    async def similar_episodes(
        self, info: Info[Any, Any], query: str, signature: str | None = None, limit: int = 5
    ) -> list[ScoredEpisode]:
        episodes, tenant = _episodes(info)
        return [
            ScoredEpisode.of(r) for r in await episodes.similar(tenant, query, signature, limit)
        ]

    @strawberry.field(
        description="What similar episodes chose, by similarity-weighted voting: each key's "
        "winning value and its confidence. validValues drops stale choices first."
    )
    async def prior_knowledge(
        self,
        info: Info[Any, Any],
        query: str,
        signature: str | None = None,
        limit: int = 5,
        valid_values: list[str] | None = None,
    ) -> PriorKnowledge:
        episodes, tenant = _episodes(info)
        votes, rows = await episodes.prior_knowledge(tenant, query, signature, limit, valid_values)
        return PriorKnowledge(
            votes=[
                MappingVote(
                    key=v.key,
                    value=v.value,
                    confidence=v.confidence,
                    votes=v.votes,
                    alternatives=cast(JSON, v.alternatives),
                )
                for v in votes
            ],
            episodes=[ScoredEpisode.of(r) for r in rows],
        )

    @strawberry.field(description="Stored reflections, newest first.")
    async def reflections(
        self, info: Info[Any, Any], kind: str | None = None, signature: str | None = None
    ) -> list[Reflection]:
        episodes, tenant = _episodes(info)
        return [Reflection.of(r) for r in await episodes.reflections(tenant, kind, signature)]

    @strawberry.field(description="A task's working memory (in process; cleared on completion).")
    async def working_memory(self, info: Info[Any, Any], task_id: strawberry.ID) -> JSON:
        service, tenant = _ctx(info)
        return cast(JSON, service.working.get(tenant, str(task_id)))

    @strawberry.field(description="The last messages of a session's short-term history.")
    async def conversation(
        self, info: Info[Any, Any], session_id: strawberry.ID, last: int = 10
    ) -> list[Message]:
        manager, tenant = _manager(info)
        return [Message.of(m) for m in await manager.history(tenant, str(session_id), last)]

    @strawberry.field(description="An agent's persona with its most relevant learned traits.")
    async def persona(
        self,
        info: Info[Any, Any],
        agent_id: strawberry.ID,
        query: str = "persona traits",
        limit: int = 3,
    ) -> Persona:
        manager, tenant = _manager(info)
        return Persona.of(await manager.persona(tenant, str(agent_id), query, limit))

    @strawberry.field(description="Structured records of a schema whose fields equal `where`.")
    async def records(
        self, info: Info[Any, Any], schema: str, where: JSON | None = None, limit: int = 50
    ) -> list[Record]:
        manager, tenant = _manager(info)
        rows = await manager.records(tenant, schema, cast(Any, where), limit)
        return [Record.of(r) for r in rows]

    @strawberry.field(description="Retrieve from several memory types at once (seed 003).")
    async def retrieve(
        self,
        info: Info[Any, Any],
        query: str,
        kinds: list[MemoryKind] | None = None,
        session_id: strawberry.ID | None = None,
        user_id: strawberry.ID | None = None,
        task_id: strawberry.ID | None = None,
        agent_id: strawberry.ID | None = None,
        schema: str | None = None,
        where: JSON | None = None,
        limit: int = 5,
    ) -> Retrieved:
        manager, tenant = _manager(info)
        found = await manager.retrieve(
            tenant,
            query,
            kinds,
            session_id=_s(session_id),
            user_id=_s(user_id),
            task_id=_s(task_id),
            agent_id=_s(agent_id),
            schema=schema,
            where=where,
            limit=limit,
        )
        return Retrieved(
            working=cast(JSON, found["working"]) if "working" in found else None,
            short_term=[Message.of(m) for m in found["short_term"]]
            if "short_term" in found
            else None,
            long_term=[ScoredMemory.of(s) for s in found["long_term"]]
            if "long_term" in found
            else None,
            persona=Persona.of(found["persona"]) if "persona" in found else None,
            episodic=[ScoredEpisode.of(r) for r in found["episodic"]]
            if "episodic" in found
            else None,
            entities=[UserEntity.of(r) for r in found["entity"]] if "entity" in found else None,
            structured=[Record.of(r) for r in found["structured"]]
            if "structured" in found
            else None,
        )

    @strawberry.field(description="Counts and sizes per tier and type (seed 001's stats).")
    async def stats(
        self,
        info: Info[Any, Any],
        session_id: strawberry.ID | None = None,
        user_id: strawberry.ID | None = None,
    ) -> list[TierTypeStats]:
        service, tenant = _ctx(info)
        rows = await service.reports.stats(tenant, _s(session_id), _s(user_id))
        return [
            TierTypeStats(
                tier=Tier(r["tier"]),
                type=MemoryType(r["type"]),
                items=r["items"],
                tokens=r["tokens"],
                bytes=r["bytes"],
            )
            for r in rows
        ]

    @strawberry.field(description="Memories containing the text, any case, every tier.")
    async def find(
        self,
        info: Info[Any, Any],
        text: str,
        session_id: strawberry.ID | None = None,
        user_id: strawberry.ID | None = None,
        limit: int = 20,
    ) -> list[MemoryItem]:
        service, tenant = _ctx(info)
        found = await service.reports.find(tenant, text, _s(session_id), _s(user_id), limit)
        return [MemoryItem.of(i) for i in found]

    @strawberry.field(description="The tier settings in force for a session.")
    async def session_config(
        self, info: Info[Any, Any], session_id: strawberry.ID
    ) -> SessionConfig:
        service, tenant = _ctx(info)
        config = await service.sessions.config(tenant, str(session_id))
        return SessionConfig.of(str(session_id), config)

    @strawberry.field(description="Items and tokens per tier, with suggestions.")
    async def memory_status(self, info: Info[Any, Any], session_id: strawberry.ID) -> MemoryStatus:
        service, tenant = _ctx(info)
        return MemoryStatus.of(await service.reports.status(tenant, str(session_id)))

    @strawberry.field(description="Rank warm and cold memories for a query; no side effects.")
    async def search(
        self,
        info: Info[Any, Any],
        query: str,
        session_id: strawberry.ID | None = None,
        user_id: strawberry.ID | None = None,
        limit: int = 10,
        types: list[MemoryType] | None = None,
        retriever: Retriever = Retriever.HYBRID,
    ) -> list[ScoredMemory]:
        service, tenant = _ctx(info)
        q = RecallQuery(
            query=query,
            session_id=str(session_id) if session_id is not None else None,
            user_id=str(user_id) if user_id is not None else None,
            limit=limit,
            types=types,
            auto_promote=False,
            retriever=retriever,
        )
        return [ScoredMemory.of(s) for s in await service.recall.search(tenant, q)]


@strawberry.type
class Mutation:
    @strawberry.mutation(description="Add a memory to the session's hot tier.")
    async def add_memory(self, info: Info[Any, Any], input: AddMemoryInput) -> MemoryItem:
        service, tenant = _ctx(info)
        return MemoryItem.of(await service.ingest.add(tenant, input.to_spec()))

    @strawberry.mutation(description="Add several memories in one call.")
    async def add_memories(
        self, info: Info[Any, Any], inputs: list[AddMemoryInput]
    ) -> list[MemoryItem]:
        service, tenant = _ctx(info)
        items = await service.ingest.add_many(tenant, [i.to_spec() for i in inputs])
        return [MemoryItem.of(i) for i in items]

    @strawberry.mutation(
        description="Move hot items into the graph: the given ids, or the `count` "
        "lowest-relevance, oldest ones (default: the configured spill count)."
    )
    async def spill(
        self,
        info: Info[Any, Any],
        session_id: strawberry.ID,
        count: int | None = None,
        item_ids: list[strawberry.ID] | None = None,
    ) -> SpillResult:
        service, tenant = _ctx(info)
        ids = [str(i) for i in item_ids] if item_ids else None
        return SpillResult.of(await service.spills.spill(tenant, str(session_id), count, ids))

    @strawberry.mutation(
        description="Search warm and cold memories, record the access, and promote "
        "items above the promote threshold to the hot tier."
    )
    async def recall(self, info: Info[Any, Any], input: RecallInput) -> RecallResult:
        service, tenant = _ctx(info)
        q = RecallQuery(
            query=input.query,
            session_id=str(input.session_id) if input.session_id is not None else None,
            user_id=str(input.user_id) if input.user_id is not None else None,
            limit=input.limit,
            auto_promote=input.auto_promote,
            types=input.types,
            retriever=input.retriever,
        )
        return RecallResult.of(await service.recall.recall(tenant, q))

    @strawberry.mutation(
        description="Apply a retention policy to warm and cold memories. dryRun (the "
        "default) reports exactly what an apply of the same policy removes."
    )
    async def prune(
        self, info: Info[Any, Any], policy: PrunePolicyInput, dry_run: bool = True
    ) -> PruneResult:
        service, tenant = _ctx(info)
        done = await service.removal.prune(tenant, policy.to_policy(), dry_run)
        return PruneResult(
            dry_run=done["dryRun"],
            count=done["count"],
            bytes=done["bytes"],
            ids=[strawberry.ID(i) for i in done["ids"]],
            removed=done["removed"],
        )

    @strawberry.mutation(description="Add to any memory type (seed 003's MemoryManager.add).")
    async def remember(self, info: Info[Any, Any], input: RememberInput) -> RememberResult:
        manager, tenant = _manager(info)
        done = await manager.remember(
            tenant,
            input.kind,
            content=input.content,
            session_id=_s(input.session_id),
            user_id=_s(input.user_id),
            task_id=_s(input.task_id),
            agent_id=_s(input.agent_id),
            type=input.type,
            role=input.role,
            key=input.key,
            value=input.value,
            schema=input.schema,
            data=input.data,
            success=True if input.success is None else input.success,
        )
        return RememberResult(
            kind=input.kind,
            memory_id=_id(done.get("memoryId")),
            episode_id=_id(done.get("episodeId")),
            record_id=_id(done.get("recordId")),
            message=Message.of(done["message"]) if "message" in done else None,
            working=cast(JSON, done["working"]) if "working" in done else None,
        )

    @strawberry.mutation(description="Set a key of a task's working memory; returns it all.")
    async def set_working_memory(
        self, info: Info[Any, Any], task_id: strawberry.ID, key: str, value: JSON | None
    ) -> JSON:
        service, tenant = _ctx(info)
        return cast(JSON, service.working.set(tenant, str(task_id), key, value))

    @strawberry.mutation(description="Append a message to a session's short-term history.")
    async def add_message(
        self, info: Info[Any, Any], session_id: strawberry.ID, content: str, role: str = "user"
    ) -> Message:
        manager, tenant = _manager(info)
        return Message.of(await manager.add_message(tenant, str(session_id), role, content))

    @strawberry.mutation(description="Store an agent's persona (overrides the configured one).")
    async def set_persona(
        self, info: Info[Any, Any], agent_id: strawberry.ID, input: PersonaInput
    ) -> Persona:
        manager, tenant = _manager(info)
        await manager.set_persona(
            tenant,
            str(agent_id),
            PersonaConfig(
                role=input.role,
                tone=input.tone,
                expertise=input.expertise,
                constraints=input.constraints,
            ),
        )
        return Persona.of(await manager.persona(tenant, str(agent_id)))

    @strawberry.mutation(description="Teach an agent's persona a trait (kept as a memory).")
    async def learn_persona_trait(
        self, info: Info[Any, Any], agent_id: strawberry.ID, trait: str
    ) -> strawberry.ID:
        manager, tenant = _manager(info)
        return strawberry.ID(await manager.learn_trait(tenant, str(agent_id), trait))

    @strawberry.mutation(description="Register (or replace) a JSON schema for records.")
    async def register_record_schema(self, info: Info[Any, Any], name: str, schema: JSON) -> bool:
        manager, tenant = _manager(info)
        await manager.register_schema(tenant, name, cast(Any, schema))
        return True

    @strawberry.mutation(description="Store a record after validating it against its schema.")
    async def add_record(self, info: Info[Any, Any], schema: str, data: JSON) -> Record:
        manager, tenant = _manager(info)
        return Record.of(await manager.add_record(tenant, schema, cast(Any, data)))

    @strawberry.mutation(
        description="Remove everything a user owns: memories in every tier, entities only "
        "they mentioned, their mention edges, empty sessions and the user itself."
    )
    async def forget_user(self, info: Info[Any, Any], user_id: strawberry.ID) -> ForgetUserResult:
        service, tenant = _ctx(info)
        done = await service.removal.forget_user(tenant, str(user_id))
        return ForgetUserResult(
            hot_memories=done["hotMemories"],
            graph_memories=done["graphMemories"],
            sessions=done["sessions"],
            entities=done["entities"],
        )

    @strawberry.mutation(description="Start a task (episodic memory).")
    async def create_task(
        self, info: Info[Any, Any], description: str, owner: str | None = None
    ) -> Task:
        episodes, tenant = _episodes(info)
        return Task.of(await episodes.create_task(tenant, description, owner))

    @strawberry.mutation(
        description="Append a step to a task (HAS_STEP {order}, NEXT). A task with an owner "
        "takes steps only from its current handle: owner and generation."
    )
    async def add_step(
        self,
        info: Info[Any, Any],
        task_id: strawberry.ID,
        input: StepInput,
        owner: str | None = None,
        generation: int | None = None,
    ) -> Step:
        episodes, tenant = _episodes(info)
        return Step.of(
            await episodes.add_step(
                tenant,
                str(task_id),
                input.action,
                input.result,
                input.status,
                owner=owner,
                generation=generation,
            )
        )

    @strawberry.mutation(
        description="Hand a task to its next owner (pipelines, seed 001): only the current "
        "handle may; the generation goes up by one and the hand-over is audited. A stale "
        "handle gets FORBIDDEN naming the current owner and generation."
    )
    async def transfer_task(
        self,
        info: Info[Any, Any],
        task_id: strawberry.ID,
        to_owner: str,
        generation: int,
        from_owner: str | None = None,
        reason: str = "",
    ) -> TaskHandle:
        episodes, tenant = _episodes(info)
        done = await episodes.transfer(
            tenant, str(task_id), from_owner, generation, to_owner, reason
        )
        return TaskHandle(task_id=task_id, owner=done["owner"], generation=done["generation"])

    @strawberry.mutation(description="Close a task with its final status.")
    async def complete_task(
        self, info: Info[Any, Any], task_id: strawberry.ID, status: str = "completed"
    ) -> Task:
        episodes, tenant = _episodes(info)
        task = await episodes.complete_task(tenant, str(task_id), status)
        return Task.of(task)

    @strawberry.mutation(
        description="Record an episode: a task's outcome, signature, lessons, metrics and "
        "mappings. Without taskId, a task is created from description and steps."
    )
    async def record_episode(self, info: Info[Any, Any], input: EpisodeInput) -> Episode:
        episodes, tenant = _episodes(info)
        if input.metrics is not None and not isinstance(input.metrics, dict):
            raise BadInput("metrics: an object is required", field="metrics")
        episode = await episodes.record_episode(
            tenant,
            outcome=input.outcome,
            success=input.success,
            task_id=str(input.task_id) if input.task_id else None,
            description=input.description,
            steps=[
                {"action": s.action, "result": s.result, "status": s.status}
                for s in input.steps or []
            ],
            signature=input.signature,
            structure=input.structure,
            lessons=input.lessons or [],
            metrics=cast(dict[str, Any], input.metrics or {}),
            mappings=_mapping(input.mappings, "mappings"),
        )
        return Episode.of(episode)

    @strawberry.mutation(
        description="Find patterns across episodes (failing actions, the alternative that "
        "worked, success rate per signature, a summary) and store them as reflections."
    )
    async def reflect(self, info: Info[Any, Any], signature: str | None = None) -> list[Reflection]:
        episodes, tenant = _episodes(info)
        return [Reflection.of(r) for r in await episodes.reflect(tenant, signature)]

    @strawberry.mutation(description="Fold one entity into another (undo with undoMerge).")
    async def merge_entities(
        self,
        info: Info[Any, Any],
        source_id: strawberry.ID,
        target_id: strawberry.ID,
        reason: str = "",
    ) -> MergeResult:
        entities, tenant = _entities(info)
        merge_id = await entities.merge(tenant, str(source_id), str(target_id), reason)
        return MergeResult(
            merge_id=strawberry.ID(merge_id), source_id=source_id, target_id=target_id
        )

    @strawberry.mutation(description="Separate two merged entities again.")
    async def undo_merge(self, info: Info[Any, Any], merge_id: strawberry.ID) -> MergeResult:
        entities, tenant = _entities(info)
        source, target = await entities.undo_merge(tenant, str(merge_id))
        return MergeResult(
            merge_id=merge_id, source_id=strawberry.ID(source), target_id=strawberry.ID(target)
        )

    @strawberry.mutation(
        description="Undo a variant merge: mentions written as `surface` become an entity of "
        "their own, and stay apart from now on. Returns the new entity's id."
    )
    async def split_entity(
        self, info: Info[Any, Any], id: strawberry.ID, surface: str
    ) -> strawberry.ID:
        entities, tenant = _entities(info)
        return strawberry.ID(await entities.split_surface(tenant, str(id), surface))

    @strawberry.mutation(
        description="Resolve a name to an entity (its id) or another name from now on "
        "(NYC → New York City). Returns what the alias resolves to."
    )
    async def set_entity_alias(self, info: Info[Any, Any], alias: str, canonical: str) -> str:
        entities, tenant = _entities(info)
        return await entities.set_alias(tenant, alias, canonical)

    @strawberry.mutation(description="Override tier settings for one session.")
    async def configure_session(
        self, info: Info[Any, Any], session_id: strawberry.ID, config: SessionConfigInput
    ) -> SessionConfig:
        service, tenant = _ctx(info)
        effective = await service.sessions.configure(tenant, str(session_id), config.overrides())
        return SessionConfig.of(str(session_id), effective)

    @strawberry.mutation(description="Bring a warm or cold memory into its session's hot tier.")
    async def promote(self, info: Info[Any, Any], item_id: strawberry.ID) -> MemoryItem:
        service, tenant = _ctx(info)
        return MemoryItem.of(await service.promotion.promote(tenant, str(item_id)))

    @strawberry.mutation(
        description="Remove a memory from every tier; false when there was no such memory."
    )
    async def forget(self, info: Info[Any, Any], item_id: strawberry.ID) -> bool:
        service, tenant = _ctx(info)
        return await service.removal.forget(tenant, str(item_id))


@strawberry.type
class Subscription:
    @strawberry.subscription(
        description="The tenant's change feed over graphql-transport-ws: added, spilled, "
        "promoted, recalled, forgotten, entity merged and task transferred events, from "
        "every API replica (Redis pub/sub)."
    )
    async def memory_events(
        self, info: Info[Any, Any], filter: EventFilter | None = None
    ) -> AsyncGenerator[MemoryEvent, None]:
        service, tenant = _ctx(info)
        if not isinstance(service.events, EventBus):
            raise Unavailable("the change feed needs Redis events (MemoryBuilder.with_events)")
        async for event in service.events.subscribe(tenant):
            if filter is None or filter.matches(event):
                yield MemoryEvent.of(event)


class GraphmemSchema(strawberry.Schema):
    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        # TypedErrors already logged what was unexpected; client mistakes (bad input,
        # unknown ids) are not server problems and would only flood the log.
        return None

    async def execute(self, *args: Any, **kwargs: Any) -> ExecutionResult:
        result = await super().execute(*args, **kwargs)
        # An error raised by an extension's parse hook (the guard's "too long") leaves
        # the operation before TypedErrors sees the result: type it here.
        if result.errors and any(not (e.extensions or {}).get("code") for e in result.errors):
            result.errors = [
                e if (e.extensions or {}).get("code") else typed_error(e) for e in result.errors
            ]
        return result


def build_schema(limits: Limits | None = None) -> strawberry.Schema:
    limits = limits or Limits()
    return GraphmemSchema(
        query=Query,
        mutation=Mutation,
        subscription=Subscription,
        extensions=[
            # Token, depth, alias and expanded-size limits in one linear pass before
            # any fragment-expanding rule runs; parse and validation cached per text.
            lambda: DocumentGuard(limits),
            TypedErrors,
        ],
    )
