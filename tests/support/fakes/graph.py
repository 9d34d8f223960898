"""An in-memory graph store (``GraphStore`` with its ``GraphSearch``, ``GraphScans`` and
``GraphSpaces`` parts), behaving as ``graphmem/stores/neo4j`` and its Cypher files do where
the contract (``tests/support/contracts/graph.py``) says so:

- a memory is a node of properties named as the Cypher names them, keyed by (tenant, id),
  written from the rows ``neo4j/records.py`` builds for the real store's statements: an
  upsert of the same id converges to one node, and no read ever crosses tenants;
- a tenant holds one model's vectors, the first written (``upsert_batch``, ``set_vectors``);
  another model's vectors are not written;
- ``upsert_hot`` creates 'hot' nodes without vectors and leaves existing nodes alone;
- ``record_access`` counts, averages relevance and warms a cold memory past the threshold;
- searches rank exactly: cosine over a scope (what Neo4j does below its exact-scan limit;
  its vector index approximates this), BM25 with the tenant's statistics over the stems
  ``enrich/lexical.py`` computes (what the tenant's Lucene index approximates).

Entities are not modelled: no memory mentions one, so ``linked`` finds nothing, and
``delete_many`` reports no entity keys. What no capability under unit test needs raises
``NotImplementedError`` saying so.
"""

from __future__ import annotations

import math
import re
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, NoReturn

import numpy as np

from graphmem.domain.models import EmbeddingSpace, MemoryItem, MemoryType, Tier, TierCount
from graphmem.domain.moments import NOW, Moment, micros
from graphmem.enrich import lexical
from graphmem.memory.search.scopescoring import BM25_B, BM25_K1
from graphmem.stores import GraphErasure, GraphScans, GraphSearch, GraphSpaces
from graphmem.stores.models import (
    GraphMemory,
    Located,
    MemoryRows,
    MemoryVectors,
    Removed,
    ScopeTooLarge,
    TextAnalysis,
    UserRemoved,
)
from graphmem.stores.neo4j.records import memory_item
from graphmem.stores.neo4j.rows import analysis_row, memory_row, vector_row
from graphmem.stores.neo4j.search import GRAPH_TIERS, SCOPE_PAGE
from graphmem.stores.neo4j.search import Neo4jGraphSearch as _Real
from tests.support.fakes.erasure import FakeGraphErasure
from tests.support.fakes.faults import Faults

Node = dict[str, Any]

#: the properties ``memory/upsert_batch`` sets from a row (vectors apart)
_ROW_PROPERTIES = (
    "sessionId",
    "userId",
    "content",
    "type",
    "tier",
    "accessCount",
    "lastAccessedAt",
    "createdAt",
    "relevanceScore",
    "tokenCount",
    "contentHash",
    "metadata",
    "seq",
    "scopeToken",
    "termBytes",
    "termVersion",
    "speaker",
)
_CONTENT = re.compile(r"content:\(([^)]*)\)")
_SCOPE = re.compile(r"scopeToken:([A-Za-z0-9]+)\^0")


def not_modelled(what: str) -> NoReturn:
    raise NotImplementedError(f"the in-memory graph store does not model {what}")


def _item(tenant: str, node: Node) -> MemoryItem:
    return memory_item(tenant, node)


def _epoch(value: Any) -> int:
    return int(value.timestamp()) if isinstance(value, datetime) else 0


def _rows(
    nodes: Sequence[Node],
    *,
    vectors: bool = False,
    sentences: bool = False,
    terms: bool = False,
    scores: Sequence[float] | None = None,
    anchors: Sequence[str] | None = None,
    clocks: bool = False,
) -> MemoryRows:
    """Nodes as ``neo4j/records.memory_rows`` reads the columns a statement returns."""
    n = len(nodes)
    return MemoryRows(
        ids=[m["id"] for m in nodes],
        sessions=[m.get("sessionId") or "" for m in nodes],
        users=[m.get("userId") or None for m in nodes],
        seqs=[int(m.get("seq") or 0) for m in nodes],
        types=[m.get("type") or "" for m in nodes],
        tiers=[m.get("tier") or "" for m in nodes],
        vectors=[m.get("vectorBytes") for m in nodes] if vectors else [None] * n,
        sentences=[m.get("sentenceVectors") for m in nodes] if sentences else [None] * n,
        scores=list(scores) if scores is not None else [],
        anchors=list(anchors) if anchors is not None else [],
        terms=[
            m.get("termBytes") if m.get("termVersion") == lexical.VERSION else None for m in nodes
        ]
        if terms
        else [],
        created=[_epoch(m.get("createdAt")) for m in nodes],
        speakers=[m.get("speaker") or "" for m in nodes],
        **(_clocks(nodes) if clocks else {}),
    )


def _micros(value: Any) -> int | None:
    return micros(value) if isinstance(value, datetime) else None


def _clocks(nodes: Sequence[Node]) -> dict[str, Any]:
    """The clocks ``memory/scope_rows_*`` carry (``MemoryRows.recorded``)."""
    return {
        "recorded": [_micros(m.get("recordedAt") or m.get("createdAt")) for m in nodes],
        "occurred": [_micros(m.get("createdAt")) for m in nodes],
        "retracted": [_micros(m.get("retractedAt")) for m in nodes],
        "spans": [
            tuple(
                (micros(a), micros(b))
                for a, b in zip(
                    m.get("pastRetractedAt") or [], m.get("restoredAt") or [], strict=False
                )
            )
            for m in nodes
        ],
    }


def _seen(m: Node, moment: Moment) -> bool:
    """The predicate of the statements that read at a moment (memory/text_hits), the
    retraction spans of unretracted memories included."""
    created, recorded = m.get("createdAt"), m.get("recordedAt") or m.get("createdAt")
    if moment.as_of is not None and isinstance(recorded, datetime) and recorded > moment.as_of:
        return False
    if moment.valid_at is not None and isinstance(created, datetime) and created > moment.valid_at:
        return False
    if moment.history:
        return True
    retracted = m.get("retractedAt")
    if moment.as_of is None:
        return retracted is None
    spans = zip(m.get("pastRetractedAt") or [], m.get("restoredAt") or [], strict=True)
    return (retracted is None or retracted > moment.as_of) and not any(
        start <= moment.as_of < end for start, end in spans
    )


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    norm = float(np.linalg.norm(x) * np.linalg.norm(y))
    return 0.0 if norm == 0 else float(x @ y) / norm


def _in_scope(
    m: Node,
    session_id: str | None,
    user_id: str | None,
    tiers: Sequence[str],
    types: Sequence[MemoryType] | None,
    moment: Moment = NOW,
) -> bool:
    return (
        _seen(m, moment)
        and (session_id is None or m.get("sessionId") == session_id)
        and (user_id is None or m.get("userId") == user_id)
        and m.get("tier") in tiers
        and (not types or m.get("type") in {t.value for t in types})
    )


class FakeGraphSearch:
    #: the real store's: below it a scope is ranked exactly (the fake always is)
    exact_scan_limit = _Real.exact_scan_limit

    def __init__(self, store: FakeGraphStore) -> None:
        self._store = store

    async def scope_size(
        self,
        tenant: str,
        session_id: str | None,
        user_id: str | None,
        tiers: Sequence[str] = GRAPH_TIERS,
    ) -> int:
        self._store.faults.check("scope_size")
        # a session's count leaves its user out, as memory/scope_size_session does
        name, value = ("sessionId", session_id) if session_id is not None else ("userId", user_id)
        n = sum(
            1 for m in self._store.nodes(tenant) if m.get(name) == value and m.get("tier") in tiers
        )
        return min(n, self.exact_scan_limit + 1)

    async def vector_hits(
        self,
        tenant: str,
        embedding: Sequence[float],
        limit: int,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        types: Sequence[MemoryType] | None = None,
        tiers: Sequence[str] = GRAPH_TIERS,
        scope_size: int | None = None,
        moment: Moment = NOW,
    ) -> MemoryRows:
        self._store.faults.check("vector_hits")
        scored = [
            (_cosine(m["embedding"], embedding), m)
            for m in self._store.nodes(tenant)
            if m.get("embedding") is not None
            and _in_scope(m, session_id, user_id, tiers, types, moment)
        ]
        scored.sort(key=lambda e: e[0], reverse=True)
        top = scored[:limit]
        return _rows(
            [m for _, m in top],
            sentences=True,
            scores=[max(0.0, min(1.0, c)) for c, _ in top],
        )

    async def text_hits(
        self,
        tenant: str,
        lucene: str,
        limit: int,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        types: Sequence[MemoryType] | None = None,
        tiers: Sequence[str] = GRAPH_TIERS,
        vectors: bool = False,
        moment: Moment = NOW,
    ) -> MemoryRows:
        self._store.faults.check("text_hits")
        found = _CONTENT.search(lucene)
        words = found.group(1).split(" OR ") if found else []
        wanted = set(lexical.hashes(lexical.stems(lexical.words(" ".join(words)))).tolist())
        required = set(_SCOPE.findall(lucene))
        index = self._store.nodes(tenant)
        scores = _bm25(index, wanted)

        def order(m: Node) -> tuple[float, float, int]:
            when = m.get("createdAt")
            at = when.timestamp() if isinstance(when, datetime) else 0.0
            return (-scores[m["id"]], at, int(m.get("seq") or 0))

        # what Lucene returns ($k, twice the limit) is then filtered, as text_hits does
        matched = sorted(
            (
                m
                for m in index
                if scores.get(m["id"], 0.0) > 0
                and required <= set(str(m.get("scopeToken") or "").split())
            ),
            key=order,
        )[: limit * 2]
        kept = [m for m in matched if _in_scope(m, session_id, user_id, tiers, types, moment)]
        kept = kept[:limit]
        return _rows(
            kept,
            vectors=vectors,
            sentences=vectors,
            scores=[scores[m["id"]] for m in kept],
        )

    async def neighbours(
        self,
        tenant: str,
        ids: Sequence[str],
        window: int = 1,
        *,
        user_id: str | None = None,
        tiers: Sequence[str] = GRAPH_TIERS,
        also: Sequence[str] = (),
        moment: Moment = NOW,
    ) -> tuple[MemoryRows, Mapping[str, MemoryItem]]:
        self._store.faults.check("neighbours")
        nodes = self._store.nodes(tenant)
        anchors: list[str] = []
        around: list[Node] = []
        heads: list[Node] = []
        for item_id in ids:
            m = self._store.node(tenant, item_id)
            if m is None:
                continue
            session = [
                p
                for p in nodes
                if p.get("sessionId") == m.get("sessionId")
                and p.get("tier") in tiers
                and (user_id is None or p.get("userId") == user_id)
                and _seen(p, moment)
            ]
            seq = int(m.get("seq") or 0)
            before = sorted(
                (p for p in session if int(p.get("seq") or 0) < seq),
                key=lambda p: int(p.get("seq") or 0),
                reverse=True,
            )[:window]
            after = sorted(
                (p for p in session if int(p.get("seq") or 0) > seq),
                key=lambda p: int(p.get("seq") or 0),
            )[:window]
            near = list({p["id"]: p for p in before + after}.values())
            if near and m not in heads:
                heads.append(m)
            anchors += [m["id"]] * len(near)
            around += near
        extra = [m for i in also if (m := self._store.node(tenant, i)) is not None]
        items = {m["id"]: _item(tenant, m) for m in heads + around + extra}
        return _rows(around, vectors=True, sentences=True, anchors=anchors), items

    async def linked(
        self,
        tenant: str,
        ids: Sequence[str],
        max_mentions: int,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        tiers: Sequence[str] = GRAPH_TIERS,
        vectors: bool = True,
        moment: Moment = NOW,
    ) -> MemoryRows:
        # No memory mentions an entity here (entities are not modelled): nothing links.
        return _rows([], anchors=[])

    async def scope_pages(
        self, tenant: str, session_id: str | None, user_id: str | None, cap: int
    ) -> AsyncIterator[MemoryRows]:
        self._store.faults.check("scope_pages")
        nodes = self._store.nodes(tenant)
        if session_id is not None:
            scope = [m for m in nodes if m.get("sessionId") == session_id]
        elif user_id is not None:
            scope = [m for m in nodes if m.get("userId") == user_id]
        else:
            scope = nodes
        if len(scope) >= cap:
            raise ScopeTooLarge(f"{tenant}: {min(len(scope), cap)} memories or more")
        for start in range(0, max(len(scope), 1), SCOPE_PAGE):
            page = scope[start : start + SCOPE_PAGE]
            yield _rows(page, vectors=True, sentences=True, terms=True, clocks=True)

    async def rows_by_ids(self, tenant: str, ids: Sequence[str]) -> MemoryRows:
        self._store.faults.check("rows_by_ids")
        found = [m for i in ids if (m := self._store.node(tenant, i)) is not None]
        return _rows(found, vectors=True, sentences=True, terms=True, clocks=True)

    async def memories_mentioning(
        self,
        tenant: str,
        keys: Sequence[str],
        limit: int,
        *,
        session_id: str | None = None,
        user_id: str | None = None,
        tiers: Sequence[str] = GRAPH_TIERS,
        moment: Moment = NOW,
    ) -> dict[str, int]:
        not_modelled("entity mentions (memories_mentioning)")

    async def superseded(
        self, tenant: str, ids: Sequence[str], moment: Moment = NOW
    ) -> dict[str, list[str]]:
        # No memory asserts a relation here (entities are not modelled): none is superseded.
        return {}


def _bm25(nodes: Sequence[Node], wanted: set[int]) -> dict[str, float]:
    """Each node's BM25 score for the query's stem hashes, with the statistics of
    ``nodes`` (a tenant's index), as ``memory/search/scopeview.ScopeView.bm25`` counts."""
    docs = {m["id"]: np.frombuffer(m.get("termBytes") or b"", dtype="<u4") for m in nodes}
    total = sum(len(t) for t in docs.values())
    n = len(docs)
    if not n or not total or not wanted:
        return {}
    average = total / n
    df = {t: sum(1 for terms in docs.values() if t in set(terms.tolist())) for t in wanted}
    scores: dict[str, float] = {}
    for item_id, terms in docs.items():
        counts = {t: int(np.count_nonzero(terms == t)) for t in wanted}
        norm = BM25_K1 * (1 - BM25_B + BM25_B * len(terms) / average)
        score = 0.0
        for t, tf in counts.items():
            if tf:
                idf = math.log1p((n - df[t] + 0.5) / (df[t] + 0.5))
                score += idf * tf / (tf + norm)
        scores[item_id] = score
    return scores


class FakeGraphScans:
    def __init__(self, store: FakeGraphStore) -> None:
        self._store = store

    async def count_by_tier(self, tenant: str, session_id: str) -> dict[Tier, TierCount]:
        counts = {Tier.WARM: TierCount(), Tier.COLD: TierCount()}
        for tier in (Tier.WARM, Tier.COLD):
            found = [
                m
                for m in self._store.nodes(tenant)
                if m.get("sessionId") == session_id and m.get("tier") == tier.value
            ]
            if found:
                tokens = sum(int(m.get("tokenCount") or 0) for m in found)
                counts[tier] = TierCount(items=len(found), tokens=tokens)
        return counts

    async def demote_idle_warm(self, tenant: str, before: datetime, now: datetime) -> list[str]:
        self._store.faults.check("demote_idle_warm")
        demoted = []
        for m in self._store.nodes(tenant):
            if m.get("tier") == Tier.WARM.value and m["lastAccessedAt"] < before:
                m["tier"], m["demotedAt"] = Tier.COLD.value, now
                demoted.append(m["id"])
        return demoted

    async def prune_candidates(
        self,
        tenant: str,
        tiers: Sequence[str],
        types: Sequence[str] | None,
        session_id: str | None,
        user_id: str | None,
    ) -> list[dict[str, Any]]:
        return [
            {
                "id": m["id"],
                "sessionId": m.get("sessionId"),
                "type": m.get("type"),
                "tier": m.get("tier"),
                "createdAt": m.get("createdAt"),
                "seq": m.get("seq"),
                "bytes": len(m.get("content") or ""),
            }
            for m in self._store.nodes(tenant)
            if m.get("tier") in tiers
            and (not types or m.get("type") in types)
            and (session_id is None or m.get("sessionId") == session_id)
            and (user_id is None or m.get("userId") == user_id)
        ]

    async def stats(
        self, tenant: str, session_id: str | None, user_id: str | None
    ) -> list[dict[str, Any]]:
        groups: dict[tuple[str, str], dict[str, Any]] = {}
        for m in self._store.nodes(tenant):
            if (session_id is not None and m.get("sessionId") != session_id) or (
                user_id is not None and m.get("userId") != user_id
            ):
                continue
            key = (m.get("tier") or "", m.get("type") or "")
            row = groups.setdefault(
                key, {"tier": key[0], "type": key[1], "items": 0, "tokens": 0, "bytes": 0}
            )
            row["items"] += 1
            row["tokens"] += int(m.get("tokenCount") or 0)
            row["bytes"] += len(m.get("content") or "")
        return [groups[k] for k in sorted(groups)]

    async def substring(
        self, tenant: str, needle: str, session_id: str | None, user_id: str | None, limit: int
    ) -> list[MemoryItem]:
        not_modelled("substring find")

    async def page(
        self,
        tenant: str,
        session_id: str | None,
        user_id: str | None,
        after: tuple[int, str],
        first: int,
        needles: Sequence[str] | None = None,
        moment: Moment = NOW,
    ) -> list[MemoryItem]:
        not_modelled("listing memories page by page")

    async def sessions(
        self, tenant: str, prefix: str, user_id: str | None, after: str, first: int
    ) -> list[str]:
        not_modelled("listing sessions page by page")

    async def kinds_usage(self, tenant: str) -> tuple[int, int]:
        not_modelled("the kinds besides memories (records, tasks, episodes)")


class FakeGraphSpaces:
    def __init__(self, store: FakeGraphStore) -> None:
        self._store = store

    async def of(self, tenant: str) -> str | None:
        return self._store.tenant_model(tenant)

    async def all(self) -> dict[str, str]:
        return {
            t: model
            for t in sorted(self._store.tenant_nodes)
            if (model := self._store.tenant_model(t)) is not None
        }

    async def tag_legacy(self, space: EmbeddingSpace) -> int:
        not_modelled("reembed (tag_legacy)")

    async def count(self, tenant: str, space: EmbeddingSpace) -> tuple[int, int]:
        not_modelled("reembed (count)")

    async def pending(
        self, tenant: str, space: EmbeddingSpace, after: str, batch: int
    ) -> list[tuple[str, str]]:
        not_modelled("reembed (pending)")

    async def set_next(
        self, tenant: str, space: EmbeddingSpace, vectors: Sequence[MemoryVectors]
    ) -> int:
        not_modelled("reembed (set_next)")

    async def flip(self, tenant: str, space: EmbeddingSpace) -> None:
        not_modelled("reembed (flip)")

    async def swap(self, tenant: str, space: EmbeddingSpace, batch: int) -> int:
        not_modelled("reembed (swap)")

    async def tasks_pending(
        self, tenant: str, space: EmbeddingSpace, batch: int
    ) -> list[tuple[str, str]]:
        not_modelled("reembed (tasks_pending)")

    async def set_tasks(
        self, tenant: str, space: EmbeddingSpace, rows: Sequence[dict[str, Any]]
    ) -> int:
        not_modelled("reembed (set_tasks)")


class FakeGraphStore:
    def __init__(self, faults: Faults | None = None) -> None:
        self.faults = faults or Faults()
        #: tenant → memory id → node, in the order first written
        self._memories: dict[str, dict[str, Node]] = {}
        #: tenant → its Tenant node's properties
        self.tenant_nodes: dict[str, Node] = {}
        #: Session nodes (they outlive their memories until forget_user removes them)
        self._sessions: set[tuple[str, str]] = set()
        #: (tenant, user) → the user's sessions (HAS_SESSION)
        self._user_sessions: dict[tuple[str, str], set[str]] = {}
        # Declared as the protocol types, as the real store does.
        self.search: GraphSearch = FakeGraphSearch(self)
        self.scans: GraphScans = FakeGraphScans(self)
        self.spaces: GraphSpaces = FakeGraphSpaces(self)
        self.erasure: GraphErasure = FakeGraphErasure(self)
        self.closed = False

    # --- what tests look at -------------------------------------------------------------
    def nodes(self, tenant: str) -> list[Node]:
        return list(self._memories.get(tenant, {}).values())

    def node(self, tenant: str, item_id: str) -> Node | None:
        return self._memories.get(tenant, {}).get(item_id)

    def user_sessions(self, tenant: str, user_id: str) -> set[str]:
        return set(self._user_sessions.get((tenant, user_id), set()))

    def has_session(self, tenant: str, session_id: str) -> bool:
        return (tenant, session_id) in self._sessions

    def drop_session(self, tenant: str, session_id: str) -> int:
        """Remove a Session node left without memories (erasure/session_remove)."""
        if (tenant, session_id) not in self._sessions or any(
            m.get("sessionId") == session_id for m in self.nodes(tenant)
        ):
            return 0
        self._sessions.discard((tenant, session_id))
        for sessions in self._user_sessions.values():
            sessions.discard(session_id)
        return 1

    def tenant_model(self, tenant: str) -> str | None:
        model: str | None = self.tenant_nodes.get(tenant, {}).get("embeddingModel")
        return model

    # --- writes ---------------------------------------------------------------------------
    def _claim(self, tenant: str, space: EmbeddingSpace, claims: bool) -> bool:
        """MERGE the Tenant node, let it claim ``space`` when it has no model yet and
        ``claims``; whether ``space`` is the tenant's."""
        t = self.tenant_nodes.setdefault(tenant, {"id": tenant})
        if t.get("embeddingModel") is None and claims:
            t["embeddingModel"], t["embeddingDimensions"] = space.model, space.dimensions
        return bool(t.get("embeddingModel") == space.model)

    def _place(self, tenant: str, node: Node) -> None:
        session, user = str(node["sessionId"]), node.get("userId")
        self._sessions.add((tenant, session))
        if user is not None:
            self._user_sessions.setdefault((tenant, user), set()).add(session)

    async def upsert(
        self, tenant: str, memories: Sequence[GraphMemory], space: EmbeddingSpace
    ) -> list[str]:
        self.faults.check("upsert")
        if not memories:
            return []
        guard = self.erasure
        assert isinstance(guard, FakeGraphErasure)
        rows = [r for r in map(memory_row, memories) if not guard.refuses(tenant, r)]
        same = self._claim(tenant, space, any(r.get("vectorBytes") is not None for r in rows))
        held = self._memories.setdefault(tenant, {})
        for row in rows:
            m = held.setdefault(row["id"], {"tenant": tenant, "id": row["id"]})
            m.update({k: row.get(k) for k in _ROW_PROPERTIES})
            m.setdefault("recordedAt", row.get("recordedAt"))  # the first record stays
            if same and row.get("vectorBytes") is not None:
                m["sentenceVectors"] = row.get("sentenceVectors")
                m["vectorBytes"] = row["vectorBytes"]
                m["embeddingModel"] = space.model
                if row.get("embedding") is not None:
                    m["embedding"] = list(row["embedding"])
            self._place(tenant, m)
        return [r["id"] for r in rows]

    async def upsert_hot(self, tenant: str, memories: Sequence[GraphMemory]) -> list[str]:
        self.faults.check("upsert_hot")
        if not memories:
            return []
        guard = self.erasure
        assert isinstance(guard, FakeGraphErasure)
        rows = [r for r in map(memory_row, memories) if not guard.refuses(tenant, r)]
        self.tenant_nodes.setdefault(tenant, {"id": tenant})
        held = self._memories.setdefault(tenant, {})
        for row in rows:
            if row["id"] not in held:
                m = {"tenant": tenant, "id": row["id"]}
                m.update({k: row.get(k) for k in _ROW_PROPERTIES})
                m["tier"] = Tier.HOT.value
                held[row["id"]] = m
            self._place(tenant, held[row["id"]])
        return [r["id"] for r in rows]

    async def set_vectors(
        self, tenant: str, vectors: Sequence[MemoryVectors], space: EmbeddingSpace
    ) -> list[str]:
        self.faults.check("set_vectors")
        if not vectors:
            return []
        rows = [vector_row(v) for v in vectors]
        same = self._claim(tenant, space, True)
        present = []
        for row in rows:
            m = self.node(tenant, row["id"])
            if m is None:
                continue
            if same:
                m["sentenceVectors"] = row.get("sentenceVectors")
                m["vectorBytes"] = row.get("vectorBytes")
                m["embeddingModel"] = space.model
                m["embedding"] = list(row["embedding"])
            present.append(m["id"])
        return present

    async def record_access(
        self,
        tenant: str,
        hits: Sequence[tuple[str, float]],
        now: datetime,
        warm_access_threshold: int,
    ) -> list[tuple[MemoryItem, str]]:
        self.faults.check("record_access")
        out = []
        for item_id, score in hits:
            m = self.node(tenant, item_id)
            if m is None:
                continue
            was = str(m.get("tier"))
            m["accessCount"] = int(m.get("accessCount") or 0) + 1
            m["lastAccessedAt"] = now
            relevance = m.get("relevanceScore")
            m["relevanceScore"] = ((0.5 if relevance is None else relevance) + score) / 2.0
            if m.get("tier") == Tier.COLD.value and m["accessCount"] > warm_access_threshold:
                m["tier"] = Tier.WARM.value
            out.append((_item(tenant, m), was))
        return out

    async def get(self, tenant: str, ids: Sequence[str]) -> list[MemoryItem]:
        self.faults.check("get")
        return [_item(tenant, m) for i in ids if (m := self.node(tenant, i)) is not None]

    async def unenriched(self, tenant: str, ids: Sequence[str]) -> list[MemoryItem]:
        return [
            _item(tenant, m)
            for i in ids
            if (m := self.node(tenant, i)) is not None and m.get("vectorBytes") is None
        ]

    async def mark_hot(self, tenant: str, ids: Sequence[str], now: datetime) -> list[str]:
        self.faults.check("mark_hot")
        marked = []
        for item_id in ids:
            m = self.node(tenant, item_id)
            if m is not None:
                m["tier"], m["promotedAt"] = Tier.HOT.value, now
                marked.append(item_id)
        return marked

    async def retract(
        self, tenant: str, ids: Sequence[str], reason: str, now: datetime
    ) -> list[tuple[Located, bool]]:
        self.faults.check("retract")
        out: list[tuple[Located, bool]] = []
        for item_id in ids:
            if (m := self.node(tenant, item_id)) is None:
                continue
            fresh = m.get("retractedAt") is None
            if fresh:
                m["retractedAt"], m["retractReason"] = now, reason
            out.append(((item_id, m.get("sessionId"), m.get("userId")), fresh))
        return out

    async def unretract(
        self, tenant: str, ids: Sequence[str], now: datetime
    ) -> list[tuple[Located, bool]]:
        self.faults.check("unretract")
        out: list[tuple[Located, bool]] = []
        for item_id in ids:
            if (m := self.node(tenant, item_id)) is None:
                continue
            fresh = m.get("retractedAt") is not None
            if fresh:
                m["pastRetractedAt"] = [*(m.get("pastRetractedAt") or []), m["retractedAt"]]
                m["restoredAt"] = [*(m.get("restoredAt") or []), now]
                m["retractedAt"] = m["retractReason"] = None
            out.append(((item_id, m.get("sessionId"), m.get("userId")), fresh))
        return out

    async def tenants(self) -> list[str]:
        self.faults.check("tenants")
        return sorted(self.tenant_nodes)

    async def delete(self, tenant: str, item_id: str) -> list[str] | None:
        done = await self.delete_many(tenant, [item_id])
        return [str(k) for k in done.keys] if done.removed else None

    async def delete_many(self, tenant: str, ids: Sequence[str]) -> Removed:
        self.faults.check("delete_many")
        memories = self._memories.get(tenant, {})
        gone = [memories.pop(i) for i in dict.fromkeys(ids) if i in memories]
        located = [(str(m["id"]), m.get("sessionId"), m.get("userId")) for m in gone]
        return Removed(removed=len(gone), keys=[], located=located)

    async def forget_user(self, tenant: str, user_id: str) -> UserRemoved:
        self.faults.check("forget_user")
        ids = [m["id"] for m in self.nodes(tenant) if m.get("userId") == user_id]
        done = await self.delete_many(tenant, ids)
        held = {m.get("sessionId") for m in self.nodes(tenant)}
        sessions = self._user_sessions.pop((tenant, user_id), set())
        empty = {s for s in sessions if (tenant, s) in self._sessions and s not in held}
        self._sessions -= {(tenant, s) for s in empty}
        return UserRemoved(removed=done.removed, keys=[], located=done.located, sessions=len(empty))

    # --- lifecycle ------------------------------------------------------------------------
    async def ping(self) -> None:
        self.faults.check("ping")

    async def migrate(self, dimension: int) -> list[str]:
        return []

    async def provision(self, tenants: Sequence[str]) -> list[str]:
        return []  # nothing here is planned or indexed

    async def backfill_scope_tokens(
        self, tokens: Callable[[str, str | None, str | None], str], batch: int = 5000
    ) -> int:
        return 0  # every node is written with its tokens

    async def backfill_terms(
        self, analyse: Callable[[str], TextAnalysis], version: int, batch: int = 2000
    ) -> int:
        done = 0
        for memories in self._memories.values():
            for m in memories.values():
                if m.get("termVersion") != version:
                    m.update(analysis_row(analyse(m.get("content") or "")), termVersion=version)
                    done += 1
        return done

    async def close(self) -> None:
        self.closed = True
