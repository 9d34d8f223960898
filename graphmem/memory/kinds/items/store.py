"""``ItemMemory``: LangGraph store items by (namespace, key), and search over them.

Items live in the graph, not the hot tier: a put is one MERGE keyed by (tenant, path,
key), so the last writer wins and nothing is ever half-done, and an item is searchable
by its text and meaning the moment its put returns (docs/integrations.md explains the
choice). Its value is JSON text; its text (``values.text_of``) is embedded on the put's
path, in one batch per request.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from graphmem import jsonscan
from graphmem.cputime import in_thread
from graphmem.domain.models import utcnow
from graphmem.enrich.embed import Embedder
from graphmem.errors import BadInput
from graphmem.memory.kinds.items import paths as p
from graphmem.memory.kinds.items import values as v
from graphmem.memory.search.querytext import terms
from graphmem.memory.tiers.quota import UNLIMITED, Quota, charged
from graphmem.stores import ItemStore
from graphmem.stores.models import ItemWrite, StoredItem

#: puts (or deletes) in one request, gets in one request
MAX_PUTS = 500
MAX_GETS = 1_000
#: a value's JSON text; the request body limit bounds it first
MAX_VALUE = 1_000_000
MAX_DEPTH = 64
MAX_LIMIT = 1_000
MAX_OFFSET = 10_000
#: items a filtered search without a query reads at most, newest first
SCAN_CAP = 50_000
#: items under a prefix compared exactly by cosine before the vector index is asked
EXACT_CAP = 20_000
#: namespace paths ``namespaces`` reads at most
PATHS_CAP = 100_000
#: how the two rankings add up for a query search
TEXT_WEIGHT, VECTOR_WEIGHT = 0.3, 0.7

QueryVector = Callable[[str, str], Awaitable[list[float]]]


@dataclass(frozen=True)
class ItemPut:
    """One put: ``value`` the JSON text of an object, None to delete; ``index`` the
    value paths search ranks by (None: every string); ``indexed`` False keeps the item
    out of query searches."""

    namespace: Sequence[str]
    key: str
    value: str | None
    index: Sequence[str] | None = None
    indexed: bool = True


def parse_value(text: str) -> dict[str, Any]:
    if len(text) > MAX_VALUE:
        raise BadInput(f"value: at most {MAX_VALUE} characters of JSON", field="value")
    if jsonscan.depth(text) > MAX_DEPTH:
        raise BadInput(f"value: nested at most {MAX_DEPTH} deep", field="value")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise BadInput("value: not JSON text", field="value") from exc
    if not isinstance(value, dict):
        raise BadInput("value: a JSON object", field="value")
    return value


def _match(labels: tuple[str, ...], pattern: Sequence[str], suffix: bool) -> bool:
    if len(labels) < len(pattern):
        return False
    part = labels[len(labels) - len(pattern) :] if suffix else labels[: len(pattern)]
    return all(want in ("*", have) for want, have in zip(pattern, part, strict=True))


class ItemMemory:
    def __init__(
        self,
        store: ItemStore,
        embedder: Embedder,
        query_vector: QueryVector,
        quota: Quota = UNLIMITED,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.query_vector = query_vector
        self.quota = quota

    # --- writes -------------------------------------------------------------------------
    async def put(self, tenant: str, puts: Sequence[ItemPut]) -> int:
        """Write and delete in one transaction (the last put of a key in the batch
        wins); how many items changed. Refused whole on any bad input."""
        if not 1 <= len(puts) <= MAX_PUTS:
            raise BadInput(f"items: 1 to {MAX_PUTS} per request", field="items")
        last: dict[tuple[str, str], ItemPut] = {}
        for put in puts:
            labels = p.check_labels(put.namespace, "namespace", empty=False)
            last[(p.path_of(labels), p.check_key(put.key))] = put
        writes: list[ItemWrite] = []
        to_embed: list[tuple[int, str]] = []
        size = 0
        for (path, key), put in last.items():
            if put.value is None:
                writes.append(ItemWrite(path=path, key=key, value=None))
                continue
            value = parse_value(put.value)
            labels = p.labels_of(path)
            text = v.text_of(value, v.check_index(put.index)) if put.indexed else ""
            user = labels[1] if len(labels) >= 2 and labels[0] == "users" else None
            writes.append(
                ItemWrite(
                    path=path,
                    key=key,
                    value=put.value,
                    text=text or None,
                    scope=p.scope_of(tenant, labels) if text else None,
                    user_id=user,
                )
            )
            if text:
                to_embed.append((len(writes) - 1, text[: v.MAX_EMBEDDED]))
            size += len(put.value) + len(text)
        if to_embed:
            vectors = await in_thread(self.embedder.embed, [t for _, t in to_embed])
            for (n, _), vector in zip(to_embed, vectors, strict=True):
                writes[n] = writes[n].model_copy(
                    update={"embedding": vector.tolist(), "model": self.embedder.name}
                )
        puts_n = sum(w.value is not None for w in writes)
        async with charged(self.quota, tenant, puts_n, size):
            return await self.store.write(tenant, writes, utcnow())

    # --- reads --------------------------------------------------------------------------
    async def get(
        self, tenant: str, keys: Sequence[tuple[Sequence[str], str]]
    ) -> list[StoredItem | None]:
        if not 1 <= len(keys) <= MAX_GETS:
            raise BadInput(f"keys: 1 to {MAX_GETS} per request", field="keys")
        asked = [
            (p.path_of(p.check_labels(ns, "namespace", empty=False)), p.check_key(key))
            for ns, key in keys
        ]
        return await self.store.get(tenant, asked)

    async def search(
        self,
        tenant: str,
        prefix: Sequence[str],
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
    ) -> list[StoredItem]:
        """Items under the namespace prefix: with a query, ranked by BM25 and cosine
        inside the prefix; without, newest first. ``filter`` as LangGraph's."""
        if not 1 <= limit <= MAX_LIMIT or not 0 <= offset <= MAX_OFFSET:
            raise BadInput(f"limit 1 to {MAX_LIMIT}, offset 0 to {MAX_OFFSET}", field="limit")
        path = p.path_of(p.check_labels(prefix, "namespacePrefix", empty=True))
        conditions = v.check_filter(filter)
        if query is not None and query.strip():
            found = await self._ranked(tenant, path, query, offset + limit, conditions)
        else:
            found = await self._newest(tenant, path, offset + limit, conditions)
        return found[offset : offset + limit]

    async def _newest(
        self, tenant: str, path: str, want: int, conditions: dict[str, Any] | None
    ) -> list[StoredItem]:
        if not conditions:
            return await self.store.page(tenant, path, 0, want)
        found: list[StoredItem] = []
        page = max(want, 200)
        for skip in range(0, SCAN_CAP, page):
            rows = await self.store.page(tenant, path, skip, page)
            found += [r for r in rows if v.passes(json.loads(r.value), conditions)]
            if len(found) >= want or len(rows) < page:
                break
        return found[:want]

    async def _ranked(
        self, tenant: str, path: str, query: str, want: int, conditions: dict[str, Any] | None
    ) -> list[StoredItem]:
        # a filter drops candidates: read more of each ranking
        k = min(max(want * (4 if conditions else 2), 20), MAX_LIMIT)
        words = terms(query)
        scope = p.prefix_token(tenant, path) if path else None
        lucene = f"itemText:({' OR '.join(words)})" if words else None
        if lucene and scope:
            lucene += f" AND itemScope:{scope}^0"

        async def texts() -> list[StoredItem]:
            return await self.store.text_hits(tenant, path, lucene, k) if lucene else []

        async def meanings() -> list[StoredItem]:
            vector = await self.query_vector(tenant, query)
            return await self.store.vector_hits(
                tenant, path, vector, self.embedder.name, k, EXACT_CAP
            )

        by_text, by_meaning = await asyncio.gather(texts(), meanings())
        top_text = max((h.score or 0.0 for h in by_text), default=0.0) or 1.0
        floor = min((h.score or 0.0 for h in by_meaning), default=0.0)
        cosines = {(h.path, h.key): h.score or 0.0 for h in by_meaning}
        lexical = {(h.path, h.key): (h.score or 0.0) / top_text for h in by_text}
        items = {(h.path, h.key): h for h in [*by_text, *by_meaning]}
        scored = sorted(
            (
                VECTOR_WEIGHT * cosines.get(ident, floor) + TEXT_WEIGHT * lexical.get(ident, 0.0),
                item.updated_at,
                ident,
            )
            for ident, item in items.items()
        )
        ranked = [
            items[ident].model_copy(update={"score": round(score, 6)})
            for score, _, ident in reversed(scored)
        ]
        if conditions:
            ranked = [r for r in ranked if v.passes(json.loads(r.value), conditions)]
        return ranked[:want]

    async def namespaces(
        self,
        tenant: str,
        prefix: Sequence[str] | None = None,
        suffix: Sequence[str] | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        """The namespaces holding items, sorted, matching ``prefix`` and ``suffix``
        (``*`` matches any one label), cut to ``max_depth`` labels and deduplicated."""
        if not 1 <= limit <= MAX_LIMIT or not 0 <= offset <= MAX_OFFSET:
            raise BadInput(f"limit 1 to {MAX_LIMIT}, offset 0 to {MAX_OFFSET}", field="limit")
        if max_depth is not None and not 1 <= max_depth <= p.MAX_LABELS:
            raise BadInput(f"maxDepth: 1 to {p.MAX_LABELS}", field="maxDepth")
        pre = p.check_labels(prefix or (), "prefix", empty=True)
        suf = p.check_labels(suffix or (), "suffix", empty=True)
        literal = pre[: pre.index("*")] if "*" in pre else pre
        start = p.path_of(literal)
        found: set[tuple[str, ...]] = set()
        after, read = "", 0
        while read < PATHS_CAP:
            rows = await self.store.paths(tenant, start, after, 1_000)
            for row in rows:
                labels = p.labels_of(row)
                if _match(labels, pre, False) and _match(labels, suf, True):
                    found.add(labels[:max_depth] if max_depth else labels)
            read += len(rows)
            if len(rows) < 1_000:
                break
            after = rows[-1]
        return sorted(found)[offset : offset + limit]
