"""``ItemMemory``: LangGraph store items by (namespace, key), and search over them.

Items live in the graph, not the hot tier: a put is one MERGE keyed by (tenant, path,
key), so the last writer wins and nothing is ever half-done, and an item is searchable
by its text and meaning the moment its put returns (docs/integrations.md explains the
choice). Its value is JSON text; its text (``values.text_of``) is embedded after a small
put answers (``vectors.py``: a query search compares a pending item with the query
itself meanwhile), on the request path in one batch for a larger one.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from graphmem import jsonscan
from graphmem.cputime import in_thread
from graphmem.domain.models import EventKind, as_utc, utcnow
from graphmem.enrich.embed import Embedder
from graphmem.errors import BadInput
from graphmem.memory.kinds.items import paths as p
from graphmem.memory.kinds.items import textscore
from graphmem.memory.kinds.items import values as v
from graphmem.memory.kinds.items.vectors import DEFER_MAX, Costs, Free, ItemVectors
from graphmem.memory.search.querytext import terms
from graphmem.memory.tiers.quota import UNLIMITED, Quota, charged
from graphmem.stores import ChangeFeed, ItemStore
from graphmem.stores.models_items import ItemText, ItemWrite, StoredItem
from graphmem.stores.null import NullBus

#: puts (or deletes) in one request, gets in one request
MAX_PUTS = 500
MAX_GETS = 1_000
#: a value's JSON text; the request body limit bounds it first
MAX_VALUE = 1_000_000
MAX_GET_ANSWER = 16 * MAX_VALUE  # values a get answers with (1 MB asked 1,000 times: 1 GB)
MAX_DEPTH = 64
MAX_LIMIT = 1_000
MAX_OFFSET = 10_000
#: items a filtered search without a query reads at most, newest first
SCAN_CAP = 50_000
#: items under a prefix compared exactly by cosine before the vector index is asked
EXACT_CAP = 20_000
#: namespace paths ``namespaces`` reads at most
PATHS_CAP = 100_000
#: items under a prefix whose vector is still due that a query search embeds itself
#: (newest first): normally the few put in the last milliseconds
PENDING_CAP = 64
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
    #: an import's exported times (both or neither): the put then never replaces a
    #: version the store holds that is as new or newer
    created_at: datetime | None = None
    updated_at: datetime | None = None


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


def _nearest(hits: list[StoredItem], k: int) -> list[StoredItem]:
    """The ``k`` best by score, one per item (an item set while the search ran may come
    both from the index and pending: the best score stands)."""
    best: dict[tuple[str, str], StoredItem] = {}
    for hit in hits:
        ident = (hit.path, hit.key)
        if ident not in best or (hit.score or 0.0) > (best[ident].score or 0.0):
            best[ident] = hit
    return sorted(best.values(), key=lambda h: -(h.score or 0.0))[:k]


def _match(labels: tuple[str, ...], pattern: Sequence[str], suffix: bool) -> bool:
    if len(labels) < len(pattern):
        return False
    part = labels[len(labels) - len(pattern) :] if suffix else labels[: len(pattern)]
    return all(want in ("*", have) for want, have in zip(pattern, part, strict=True))


def _times(put: ItemPut) -> tuple[datetime | None, datetime | None]:
    if (put.created_at is None) != (put.updated_at is None):
        raise BadInput("createdAt and updatedAt: both or neither", field="updatedAt")
    try:
        return (
            as_utc(put.created_at) if put.created_at else None,
            as_utc(put.updated_at) if put.updated_at else None,
        )
    except ValueError as exc:
        raise BadInput(f"updatedAt: {exc}", field="updatedAt") from exc


class ItemMemory:
    def __init__(
        self,
        store: ItemStore,
        embedder: Embedder,
        query_vector: QueryVector,
        quota: Quota = UNLIMITED,
        vectors: ItemVectors | None = None,
        costs: Costs | None = None,
        events: ChangeFeed | None = None,
    ) -> None:
        self.store = store
        #: the change feed hears of each batch after it committed
        self.events: ChangeFeed = events or NullBus()
        self.embedder = embedder
        self.query_vector = query_vector
        self.quota = quota
        #: None: every put embeds its items on the request path
        self.vectors = vectors
        self.costs = costs or Free()

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
            times = _times(put)
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
                    created_at=times[0],
                    updated_at=times[1],
                )
            )
            if text:
                to_embed.append((len(writes) - 1, text[: v.MAX_EMBEDDED]))
            size += len(put.value) + len(text)
        later = self.vectors is not None and len(to_embed) <= DEFER_MAX
        if later:
            for n, _ in to_embed:
                writes[n] = writes[n].model_copy(update={"vector_due": True})
        elif to_embed:
            vectors = await in_thread(self.embedder.embed, [t for _, t in to_embed])
            for (n, _), vector in zip(to_embed, vectors, strict=True):
                writes[n] = writes[n].model_copy(
                    update={"embedding": vector.tolist(), "model": self.embedder.name}
                )
        puts_n = sum(w.value is not None for w in writes)
        # a put embedding on its request path is expensive work, costed as such; one
        # leaving its few vectors for later is one write, its later CPU charged by size
        slot = self.costs.expensive(tenant) if to_embed and not later else nullcontext()
        async with slot, charged(self.quota, tenant, puts_n, size):
            written = await self.store.write(tenant, writes, utcnow(), self.embedder.name)
        if later and self.vectors is not None:
            self.costs.charge_later(sum(len(t.encode()) for _, t in to_embed))
            self.vectors.due(
                tenant,
                [ItemText(path=writes[n].path, key=writes[n].key, text=t) for n, t in to_embed],
            )
        await self._announce(tenant, writes)
        return written

    async def _announce(self, tenant: str, writes: Sequence[ItemWrite]) -> None:
        for kind, deleted in ((EventKind.ITEMS_PUT, False), (EventKind.ITEMS_DELETED, True)):
            named = [
                {"namespace": list(p.labels_of(w.path)), "key": w.key}
                for w in writes
                if (w.value is None) == deleted
            ]
            if named:
                await self.events.publish(tenant, kind, items=named)

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
        distinct = list(dict.fromkeys(asked))  # each stored item read once
        stored = dict(zip(distinct, await self.store.get(tenant, distinct), strict=True))
        answer = [stored[k] for k in asked]
        if sum(len(i.value) for i in answer if i is not None) > MAX_GET_ANSWER:
            mb = MAX_GET_ANSWER // 1_000_000
            raise BadInput(f"more than {mb} MB of values; ask for fewer keys", field="keys")
        return answer

    async def scan(
        self,
        tenant: str,
        prefix: Sequence[str],
        after: tuple[Sequence[str], str] | None,
        first: int,
    ) -> list[StoredItem]:
        """Every item under the namespace prefix by (namespace path, key), ``first``
        after ``after`` (the last item of the previous page): what an export reads."""
        if not 1 <= first <= MAX_LIMIT:
            raise BadInput(f"first: 1 to {MAX_LIMIT}", field="first")
        start = p.path_of(p.check_labels(prefix, "namespacePrefix", empty=True))
        if after is None:
            return await self.store.scan(tenant, start, "", "", first)
        labels = p.check_labels(after[0], "after.namespace", empty=False)
        last = p.path_of(labels), p.check_key(after[1])
        return await self.store.scan(tenant, start, *last, first)

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

        # BM25 and the items whose vector is still due, read while the query is embedded
        reading = asyncio.ensure_future(
            self.store.text_hits(tenant, path, lucene, k, PENDING_CAP, v.MAX_EMBEDDED)
        )
        # a failure of the embedding leaves it unread: its own failure is then no news
        reading.add_done_callback(lambda f: f.cancelled() or f.exception())
        try:
            vector = await self.query_vector(tenant, query)
            # the vectors are read after the pending items, never before: an item whose
            # vector was set in between is then among the vectors, where read the other
            # way round it would be in neither (seen in 24 gathered searches)
            found = await reading
        finally:
            reading.cancel()
        by_meaning = await self.store.vector_hits(
            tenant, path, vector, self.embedder.name, k, EXACT_CAP
        )
        by_text = found.hits
        if found.due:
            by_meaning = _nearest([*by_meaning, *await self._compared(vector, found.due)], k)
        top_text = max((h.score or 0.0 for h in by_text), default=0.0) or 1.0
        floor = min((h.score or 0.0 for h in by_meaning), default=0.0)
        cosines = {(h.path, h.key): h.score or 0.0 for h in by_meaning}
        lexical = {(h.path, h.key): (h.score or 0.0) / top_text for h in by_text}
        items = {(h.path, h.key): h for h in [*by_text, *by_meaning]}
        # items Lucene does not hold yet (textscore.py), by their BM25 on the hits' scale;
        # 64 of them at 20,000 characters are ~90 ms of analysis, which runs in a thread
        # so the loop keeps serving other requests meanwhile
        hit_texts = [(h.score or 0.0, t) for h, t in zip(by_text, found.texts, strict=True)]
        pending = [t for _, t in found.unindexed]
        if sum(map(len, pending)) > textscore.INLINE_CHARS:
            unindexed = await in_thread(textscore.unindexed_scores, words, hit_texts, pending)
        else:
            unindexed = textscore.unindexed_scores(words, hit_texts, pending)
        for (item, _), score in zip(found.unindexed, unindexed, strict=True):
            # one labelled while the search read it is among Lucene's hits too: that
            # score stands
            if score > 0 and (item.path, item.key) not in lexical:
                lexical[(item.path, item.key)] = score
                items.setdefault((item.path, item.key), item)
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

    async def _compared(
        self, query: list[float], waiting: list[tuple[StoredItem, str]]
    ) -> list[StoredItem]:
        """Items whose vector is still due, scored by the cosine of their text, embedded
        now, with the query vector (as the vector index would score them)."""
        vectors = await in_thread(self.embedder.embed, [text for _, text in waiting])
        q = np.asarray(query, dtype=np.float32)
        m = np.asarray(vectors, dtype=np.float32)
        norms = np.linalg.norm(m, axis=1) * (np.linalg.norm(q) or 1.0)
        cosines = (m @ q) / np.where(norms == 0, 1.0, norms)
        return [
            item.model_copy(update={"score": float(c)})
            for (item, _), c in zip(waiting, cosines, strict=True)
        ]

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
