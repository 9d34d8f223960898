"""The LangGraph store items' operations (``putItems``, ``items``, ``searchItems``,
``itemNamespaces``) and what they return, for both clients."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from graphmem.client.operations import Op, _some


@dataclass(frozen=True)
class StoreItem:
    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created_at: datetime
    updated_at: datetime
    score: float | None = None

    FIELDS = "namespace key valueJson createdAt updatedAt score"

    @classmethod
    def of(cls, d: dict[str, Any]) -> StoreItem:
        return cls(
            namespace=tuple(d["namespace"]),
            key=d["key"],
            value=json.loads(d["valueJson"]),
            created_at=datetime.fromisoformat(d["createdAt"]),
            updated_at=datetime.fromisoformat(d["updatedAt"]),
            score=d.get("score"),
        )


def item_put(
    namespace: Sequence[str],
    key: str,
    value: dict[str, Any] | None,
    *,
    index: Sequence[str] | None = None,
    indexed: bool = True,
    as_of: datetime | None = None,
) -> dict[str, Any]:
    """One put for ``put_items``; ``value`` None deletes the item. ``as_of`` puts a
    version of that time (its creation and update time): an item held at that time or
    later is left as it is, so a copy of older data never overwrites a newer write."""
    when = None if as_of is None else as_of.isoformat()
    return _some(
        namespace=list(namespace),
        key=key,
        valueJson=None if value is None else json.dumps(value, ensure_ascii=False),
        index=list(index) if index is not None else None,
        indexed=indexed,
        createdAt=when,
        updatedAt=when,
    )


def put_items(puts: Sequence[dict[str, Any]]) -> Op[int]:
    return Op(
        "mutation($i: [ItemPutInput!]!) { putItems(items: $i) }",
        {"i": list(puts)},
        lambda d: int(d["putItems"]),
    )


def get_items(keys: Sequence[tuple[Sequence[str], str]]) -> Op[list[StoreItem | None]]:
    return Op(
        f"query($k: [ItemKeyInput!]!) {{ items(keys: $k) {{ {StoreItem.FIELDS} }} }}",
        {"k": [{"namespace": list(ns), "key": key} for ns, key in keys]},
        lambda d: [StoreItem.of(i) if i is not None else None for i in d["items"]],
    )


def search_items(
    prefix: Sequence[str],
    query: str | None,
    filter: dict[str, Any] | None,
    limit: int,
    offset: int,
) -> Op[list[StoreItem]]:
    return Op(
        "query($p: [String!]!, $q: String, $f: JSON, $l: Int!, $o: Int!) "
        "{ searchItems(namespacePrefix: $p, query: $q, filter: $f, limit: $l, offset: $o) "
        f"{{ {StoreItem.FIELDS} }} }}",
        _some(p=list(prefix), q=query, f=filter, l=limit, o=offset),
        lambda d: [StoreItem.of(i) for i in d["searchItems"]],
    )


def item_namespaces(
    prefix: Sequence[str] | None,
    suffix: Sequence[str] | None,
    max_depth: int | None,
    limit: int,
    offset: int,
) -> Op[list[tuple[str, ...]]]:
    return Op(
        "query($p: [String!], $s: [String!], $d: Int, $l: Int!, $o: Int!) "
        "{ itemNamespaces(prefix: $p, suffix: $s, maxDepth: $d, limit: $l, offset: $o) }",
        _some(
            p=list(prefix) if prefix is not None else None,
            s=list(suffix) if suffix is not None else None,
            d=max_depth,
            l=limit,
            o=offset,
        ),
        lambda d: [tuple(n) for n in d["itemNamespaces"]],
    )
