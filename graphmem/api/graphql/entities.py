"""Entity memory: a user's entities and the merges, splits and aliases that correct them."""

from __future__ import annotations

from typing import Any

import strawberry
from strawberry.types import Info

from graphmem.api.graphql.context import entities_of
from graphmem.api.graphql.entity_types import EntityDetail, MergeResult, UserEntity
from graphmem.api.graphql.moments import AsOf, IncludeHistory, ValidAt
from graphmem.domain.moments import Moment
from graphmem.memory.entities.memory import EntityType


@strawberry.type
class EntityQuery:
    @strawberry.field(description="A user's entities, most recently mentioned first.")
    async def entities(
        self,
        info: Info[Any, Any],
        user_id: strawberry.ID,
        type: EntityType | None = None,
        limit: int = 50,
        as_of: AsOf = None,
        valid_at: ValidAt = None,
        include_history: IncludeHistory = False,
    ) -> list[UserEntity]:
        entities, tenant = entities_of(info)
        moment = Moment.of(as_of, valid_at, include_history)
        rows = await entities.user_entities(
            tenant, str(user_id), type.value if type else None, limit, moment
        )
        return [UserEntity.of(r) for r in rows]

    @strawberry.field(
        description="One entity with its mentions and the relations that hold at the "
        "moment asked (default: now); with includeHistory, closed relations too."
    )
    async def entity(
        self,
        info: Info[Any, Any],
        id: strawberry.ID,
        as_of: AsOf = None,
        valid_at: ValidAt = None,
        include_history: IncludeHistory = False,
    ) -> EntityDetail:
        entities, tenant = entities_of(info)
        moment = Moment.of(as_of, valid_at, include_history)
        return EntityDetail.of(await entities.get(tenant, str(id), moment))


@strawberry.type
class EntityMutation:
    @strawberry.mutation(description="Fold one entity into another (undo with undoMerge).")
    async def merge_entities(
        self,
        info: Info[Any, Any],
        source_id: strawberry.ID,
        target_id: strawberry.ID,
        reason: str = "",
    ) -> MergeResult:
        entities, tenant = entities_of(info)
        merge_id = await entities.merge(tenant, str(source_id), str(target_id), reason)
        return MergeResult(
            merge_id=strawberry.ID(merge_id), source_id=source_id, target_id=target_id
        )

    @strawberry.mutation(description="Separate two merged entities again.")
    async def undo_merge(self, info: Info[Any, Any], merge_id: strawberry.ID) -> MergeResult:
        entities, tenant = entities_of(info)
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
        entities, tenant = entities_of(info)
        return strawberry.ID(await entities.split_surface(tenant, str(id), surface))

    @strawberry.mutation(
        description="Resolve a name to an entity (its id) or another name from now on "
        "(NYC → New York City). Returns what the alias resolves to."
    )
    async def set_entity_alias(self, info: Info[Any, Any], alias: str, canonical: str) -> str:
        entities, tenant = entities_of(info)
        return await entities.set_alias(tenant, alias, canonical)
