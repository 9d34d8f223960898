"""Erasure (docs/concepts.md#erasure): forget a memory, memories, a session or a user with
a receipt, read the tenant's receipts, and put an exported receipt back."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from graphmem.api.graphql.context import service_of
from graphmem.api.graphql.erasure_types import (
    ErasureReceipt,
    ErasureReceiptPage,
    ForgetRecordsResult,
    ForgetResult,
    ForgetSessionResult,
    ForgetTaskResult,
)
from graphmem.api.graphql.types import ForgetUserResult


@strawberry.type
class ErasureQuery:
    @strawberry.field(
        description="The tenant's erasure receipts, newest first, a page at a time; with "
        "`userId`, those of forgetUser calls for that user."
    )
    async def erasure_receipts(
        self,
        info: Info[Any, Any],
        user_id: strawberry.ID | None = None,
        after: str | None = None,
        limit: int = 20,
    ) -> ErasureReceiptPage:
        service, tenant = service_of(info)
        user = str(user_id) if user_id is not None else None
        page, cursor = await service.erasure.receipts(tenant, user, after, limit)
        return ErasureReceiptPage(items=[ErasureReceipt.of(r) for r in page], next=cursor)


@strawberry.type
class ErasureMutation:
    @strawberry.mutation(
        description="Remove a memory from every tier; false when there was no such memory."
    )
    async def forget(self, info: Info[Any, Any], item_id: strawberry.ID) -> bool:
        service, tenant = service_of(info)
        return await service.erasure.forget(tenant, str(item_id))

    @strawberry.mutation(
        description="Remove everything a user owns: memories in every tier, entities only "
        "they mentioned, their mention edges, their sessions' messages, empty sessions and "
        "the user itself; keep it from coming back (a tombstone); a signed receipt."
    )
    async def forget_user(self, info: Info[Any, Any], user_id: strawberry.ID) -> ForgetUserResult:
        service, tenant = service_of(info)
        done = await service.erasure.forget_user(tenant, str(user_id))
        return ForgetUserResult(
            hot_memories=done.counts["hotMemories"],
            graph_memories=done.counts["graphMemories"],
            sessions=done.counts["sessions"],
            entities=done.counts["entities"],
            messages=done.counts["messages"],
            receipt=ErasureReceipt.of(done.receipt),
            tasks=done.counts["tasks"],
        )

    @strawberry.mutation(
        description="Remove a task: its steps, hand-overs, episodes, the reflections drawn "
        "from them and its working memory; keep them from coming back (tombstones); a "
        "signed receipt. A task with an owner only with its current handle: owner and "
        "generation."
    )
    async def forget_task(
        self,
        info: Info[Any, Any],
        task_id: strawberry.ID,
        owner: str | None = None,
        generation: int | None = None,
    ) -> ForgetTaskResult:
        service, tenant = service_of(info)
        done = await service.erasure.forget_task(tenant, str(task_id), owner, generation)
        return ForgetTaskResult(
            tasks=done.counts["tasks"],
            steps=done.counts["steps"],
            transfers=done.counts["transfers"],
            episodes=done.counts["episodes"],
            reflections=done.counts["reflections"],
            working_memory=done.counts["workingMemory"],
            receipt=ErasureReceipt.of(done.receipt),
        )

    @strawberry.mutation(
        description="Remove structured records by id (at most 500), with a signed receipt; "
        "ids not found are named in the receipt and leave no tombstone."
    )
    async def forget_records(
        self, info: Info[Any, Any], ids: list[strawberry.ID]
    ) -> ForgetRecordsResult:
        service, tenant = service_of(info)
        done = await service.erasure.forget_records(tenant, [str(i) for i in ids])
        return ForgetRecordsResult(
            records=done.counts["records"], receipt=ErasureReceipt.of(done.receipt)
        )

    @strawberry.mutation(
        description="Remove memories (at most 500) from every tier, keep them from coming "
        "back, and answer with a signed receipt."
    )
    async def forget_memories(
        self, info: Info[Any, Any], item_ids: list[strawberry.ID]
    ) -> ForgetResult:
        service, tenant = service_of(info)
        done = await service.erasure.forget_items(tenant, [str(i) for i in item_ids])
        return ForgetResult(
            hot_memories=done.counts["hotMemories"],
            graph_memories=done.counts["graphMemories"],
            entities=done.counts["entities"],
            receipt=ErasureReceipt.of(done.receipt),
        )

    @strawberry.mutation(
        description="Remove a session: its memories in every tier, its messages, entities "
        "only it mentioned and its node; keep them from coming back; a signed receipt."
    )
    async def forget_session(
        self, info: Info[Any, Any], session_id: strawberry.ID
    ) -> ForgetSessionResult:
        service, tenant = service_of(info)
        done = await service.erasure.forget_session(tenant, str(session_id))
        return ForgetSessionResult(
            hot_memories=done.counts["hotMemories"],
            graph_memories=done.counts["graphMemories"],
            sessions=done.counts["sessions"],
            messages=done.counts["messages"],
            entities=done.counts["entities"],
            receipt=ErasureReceipt.of(done.receipt),
        )

    @strawberry.mutation(
        description="Put an exported erasure receipt back in the tenant's log, as it was "
        "signed (graphmem import); false when the log holds it already."
    )
    async def restore_erasure_receipt(self, info: Info[Any, Any], receipt: JSON) -> bool:
        service, tenant = service_of(info)
        return await service.erasure.restore_receipt(tenant, receipt)
