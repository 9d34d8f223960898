"""LangGraph store items (docs/integrations.md#langgraph-store): JSON values by
(namespace, key), put in one atomic write, read and searched under a namespace prefix."""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from graphmem.api.graphql.context import service_of
from graphmem.errors import Unavailable
from graphmem.memory.kinds.items.paths import labels_of
from graphmem.memory.kinds.items.store import ItemMemory, ItemPut
from graphmem.stores.models_items import StoredItem


def items_of(info: Info[Any, Any]) -> tuple[ItemMemory, str]:
    service, tenant = service_of(info)
    if service.items is None:
        raise Unavailable("the LangGraph item store is not configured")
    return service.items, tenant


@strawberry.input(description="A store item's address.")
class ItemKeyInput:
    namespace: list[str]
    key: str


@strawberry.input(description="One put of a store item.")
class ItemPutInput:
    namespace: list[str]
    key: str
    value_json: str | None = strawberry.field(
        default=None, description="The value: the JSON text of an object; null deletes the item."
    )
    index: list[str] | None = strawberry.field(
        default=None,
        description="Value paths search ranks the item by (LangGraph's syntax: a.b, "
        "a[0], a[*].b); null: every string in the value.",
    )
    indexed: bool = strawberry.field(
        default=True, description="False: kept, listed, never found by a query search."
    )
    created_at: datetime | None = strawberry.field(
        default=None,
        description="An imported version's creation time (with updatedAt; graphmem import "
        "sets both): kept when the put creates the item.",
    )
    updated_at: datetime | None = strawberry.field(
        default=None,
        description="An imported version's time (with createdAt): the put is kept as of "
        "then, and leaves an item held at that time or later as it is.",
    )


@strawberry.type(description="A LangGraph store item.")
class StoreItem:
    namespace: list[str]
    key: str
    value_json: str = strawberry.field(description="The value as JSON text, as it was put.")
    created_at: datetime
    updated_at: datetime
    score: float | None = strawberry.field(
        description="A query search's relevance: 0.7 cosine + 0.3 BM25 (normalised)."
    )

    @classmethod
    def of(cls, item: StoredItem) -> StoreItem:
        return cls(
            namespace=list(labels_of(item.path)),
            key=item.key,
            value_json=item.value,
            created_at=item.created_at,
            updated_at=item.updated_at,
            score=item.score,
        )


@strawberry.type
class ItemQuery:
    @strawberry.field(description="Store items by address, in the order asked (null: none).")
    async def items(self, info: Info[Any, Any], keys: list[ItemKeyInput]) -> list[StoreItem | None]:
        store, tenant = items_of(info)
        found = await store.get(tenant, [(k.namespace, k.key) for k in keys])
        return [StoreItem.of(f) if f is not None else None for f in found]

    @strawberry.field(
        description="Every store item under a namespace prefix (none: the whole store) by "
        "namespace and key, a page at a time (`after`: the last item of the previous page): "
        "what `graphmem export` reads."
    )
    async def store_items(
        self,
        info: Info[Any, Any],
        namespace_prefix: list[str] | None = None,
        after: ItemKeyInput | None = None,
        first: int = 100,
    ) -> list[StoreItem]:
        store, tenant = items_of(info)
        last = (after.namespace, after.key) if after is not None else None
        found = await store.scan(tenant, namespace_prefix or [], last, first)
        return [StoreItem.of(f) for f in found]

    @strawberry.field(
        description="Store items under a namespace prefix: with a query, ranked by text and "
        "meaning; without, newest first. `filter` as LangGraph's ($eq $ne $gt $gte $lt $lte)."
    )
    async def search_items(
        self,
        info: Info[Any, Any],
        namespace_prefix: list[str],
        query: str | None = None,
        filter: JSON | None = None,
        limit: int = 10,
        offset: int = 0,
    ) -> list[StoreItem]:
        store, tenant = items_of(info)
        found = await store.search(
            tenant, namespace_prefix, query, cast(Any, filter), limit, offset
        )
        return [StoreItem.of(f) for f in found]

    @strawberry.field(
        description="Namespaces holding store items, sorted: `prefix` and `suffix` match "
        "label by label (`*` any one), `maxDepth` cuts them."
    )
    async def item_namespaces(
        self,
        info: Info[Any, Any],
        prefix: list[str] | None = None,
        suffix: list[str] | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[list[str]]:
        store, tenant = items_of(info)
        found = await store.namespaces(tenant, prefix, suffix, max_depth, limit, offset)
        return [list(n) for n in found]


@strawberry.type
class ItemMutation:
    @strawberry.mutation(
        description="Put (or, with a null value, delete) store items in one atomic write: "
        "the last put of a key wins. Returns how many items changed."
    )
    async def put_items(self, info: Info[Any, Any], items: list[ItemPutInput]) -> int:
        store, tenant = items_of(info)
        return await store.put(
            tenant,
            [
                ItemPut(
                    i.namespace, i.key, i.value_json, i.index, i.indexed, i.created_at, i.updated_at
                )
                for i in items
            ],
        )
