"""The tiers (docs/concepts.md#tiers): add, spill, recall, promote and forget memories,
and report what each tier holds."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from graphmem.api.graphql.context import service_of, str_or_none
from graphmem.api.graphql.moments import AsOf, IncludeHistory, ValidAt
from graphmem.api.graphql.types import (
    AddMemoryInput,
    EnrichmentStatus,
    MemoryItem,
    MemoryPage,
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
from graphmem.domain.models import MemoryType, Tier
from graphmem.domain.moments import Moment
from graphmem.errors import BadInput
from graphmem.memory import RecallQuery
from graphmem.memory.search.fusion import Retriever
from graphmem.memory.tiers.listing import MetadataMatch


@strawberry.type
class MemoryQuery:
    @strawberry.field(description="The session's hot tier, newest first.")
    async def hot(self, info: Info[Any, Any], session_id: strawberry.ID) -> list[MemoryItem]:
        service, tenant = service_of(info)
        return [MemoryItem.of(i) for i in await service.reports.hot_items(tenant, str(session_id))]

    @strawberry.field(
        description="One memory by id: the hot tier first, then the graph (a "
        "cascading read; promotes it when the promote_on_read rule is on)."
    )
    async def memory(self, info: Info[Any, Any], item_id: strawberry.ID) -> MemoryItem | None:
        service, tenant = service_of(info)
        item = await service.promotion.get(tenant, str(item_id))
        return MemoryItem.of(item) if item else None

    @strawberry.field(
        description="A scope's memories in every tier, in conversation order, a page at a "
        "time. With `metadataField`, only those whose metadata has that top-level field; "
        "with `metadataValues` too, only those where it equals one of the values: how an "
        "integration finds a memory by a key of its own."
    )
    async def memories(
        self,
        info: Info[Any, Any],
        session_id: strawberry.ID | None = None,
        user_id: strawberry.ID | None = None,
        metadata_field: str | None = None,
        metadata_values: list[JSON] | None = None,
        first: int = 100,
        after: str | None = None,
        as_of: AsOf = None,
        valid_at: ValidAt = None,
        include_history: IncludeHistory = False,
    ) -> MemoryPage:
        service, tenant = service_of(info)
        moment = Moment.of(as_of, valid_at, include_history)
        if metadata_values is not None and metadata_field is None:
            raise BadInput("metadataValues needs metadataField", field="metadataValues")
        match = MetadataMatch(metadata_field, metadata_values) if metadata_field else None
        page = await service.listing.page(
            tenant, str_or_none(session_id), str_or_none(user_id), match, first, after, moment
        )
        return MemoryPage.of(page)

    @strawberry.field(
        description="Ids of the sessions holding a memory in any tier, in id order, after "
        "`after`; with `prefix`, only ids starting with it."
    )
    async def sessions(
        self,
        info: Info[Any, Any],
        prefix: str = "",
        user_id: strawberry.ID | None = None,
        first: int = 100,
        after: str | None = None,
    ) -> list[strawberry.ID]:
        service, tenant = service_of(info)
        found = await service.listing.sessions(tenant, prefix, str_or_none(user_id), first, after)
        return [strawberry.ID(s) for s in found]

    @strawberry.field(description="Counts and sizes per tier and type (retention stats).")
    async def stats(
        self,
        info: Info[Any, Any],
        session_id: strawberry.ID | None = None,
        user_id: strawberry.ID | None = None,
    ) -> list[TierTypeStats]:
        service, tenant = service_of(info)
        rows = await service.reports.stats(tenant, str_or_none(session_id), str_or_none(user_id))
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
        service, tenant = service_of(info)
        found = await service.reports.find(
            tenant, text, str_or_none(session_id), str_or_none(user_id), limit
        )
        return [MemoryItem.of(i) for i in found]

    @strawberry.field(description="The tier settings in force for a session.")
    async def session_config(
        self, info: Info[Any, Any], session_id: strawberry.ID
    ) -> SessionConfig:
        service, tenant = service_of(info)
        config = await service.sessions.config(tenant, str(session_id))
        return SessionConfig.of(str(session_id), config)

    @strawberry.field(description="Items and tokens per tier, with suggestions.")
    async def memory_status(self, info: Info[Any, Any], session_id: strawberry.ID) -> MemoryStatus:
        service, tenant = service_of(info)
        return MemoryStatus.of(await service.reports.status(tenant, str(session_id)))

    @strawberry.field(
        description="How far the enrichment workers are with this tenant's memories: a bulk "
        "add is fully searchable by meaning once `waiting` is 0."
    )
    async def enrichment(self, info: Info[Any, Any]) -> EnrichmentStatus:
        service, tenant = service_of(info)
        return EnrichmentStatus.of(await service.reports.enrichment(tenant))

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
        as_of: AsOf = None,
        valid_at: ValidAt = None,
        include_history: IncludeHistory = False,
    ) -> list[ScoredMemory]:
        service, tenant = service_of(info)
        q = RecallQuery(
            moment=Moment.of(as_of, valid_at, include_history),
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
class MemoryMutation:
    @strawberry.mutation(description="Add a memory to the session's hot tier.")
    async def add_memory(self, info: Info[Any, Any], input: AddMemoryInput) -> MemoryItem:
        service, tenant = service_of(info)
        return MemoryItem.of(await service.ingest.add(tenant, input.to_spec()))

    @strawberry.mutation(description="Add several memories in one call.")
    async def add_memories(
        self, info: Info[Any, Any], inputs: list[AddMemoryInput]
    ) -> list[MemoryItem]:
        service, tenant = service_of(info)
        items = await service.ingest.add_many(tenant, [i.to_spec() for i in inputs])
        return [MemoryItem.of(i) for i in items]

    @strawberry.mutation(
        description="Move hot items into the graph: the given ids, or the `count` "
        "lowest-relevance, oldest ones (default: the configured spill count). With "
        "`tier` (WARM or COLD) every item goes there instead of by its access count."
    )
    async def spill(
        self,
        info: Info[Any, Any],
        session_id: strawberry.ID,
        count: int | None = None,
        item_ids: list[strawberry.ID] | None = None,
        tier: Tier | None = None,
    ) -> SpillResult:
        service, tenant = service_of(info)
        ids = [str(i) for i in item_ids] if item_ids else None
        spilled = await service.spills.spill(tenant, str(session_id), count, ids, tier)
        return SpillResult.of(spilled)

    @strawberry.mutation(
        description="Search warm and cold memories, record the access, and promote "
        "items above the promote threshold to the hot tier."
    )
    async def recall(self, info: Info[Any, Any], input: RecallInput) -> RecallResult:
        service, tenant = service_of(info)
        q = RecallQuery(
            moment=Moment.of(input.as_of, input.valid_at, input.include_history),
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
        service, tenant = service_of(info)
        done = await service.removal.prune(tenant, policy.to_policy(), dry_run)
        return PruneResult(
            dry_run=done["dryRun"],
            count=done["count"],
            bytes=done["bytes"],
            ids=[strawberry.ID(i) for i in done["ids"]],
            removed=done["removed"],
        )

    @strawberry.mutation(description="Override tier settings for one session.")
    async def configure_session(
        self, info: Info[Any, Any], session_id: strawberry.ID, config: SessionConfigInput
    ) -> SessionConfig:
        service, tenant = service_of(info)
        effective = await service.sessions.configure(tenant, str(session_id), config.overrides())
        return SessionConfig.of(str(session_id), effective)

    @strawberry.mutation(description="Bring a warm or cold memory into its session's hot tier.")
    async def promote(self, info: Info[Any, Any], item_id: strawberry.ID) -> MemoryItem:
        service, tenant = service_of(info)
        return MemoryItem.of(await service.promotion.promote(tenant, str(item_id)))
