"""An in-memory hot tier with its session index and locks (``HotTier``, ``SessionIndex``,
``SessionLocks``), behaving as ``graphmem/stores/redis/hot.py`` does where the contract
(``tests/support/contracts/hot.py``) says so:

- a session's items, token total and cached vectors expire ``ttl`` seconds after its last
  put (a put refreshes them; a remove or a touch does not), its setting overrides
  ``ttl`` seconds after they were set; the tenant indexes (where an item is, when each
  session was last written, which went over budget) do not expire;
- items are stored as their JSON, so what a caller reads is a copy as Redis would give;
- the vector cache holds one model's vectors at a time and keeps entries only for items
  still in the session;
- every key is the tenant's and the session's: nothing of one tenant is seen by another.

Time comes from ``clock`` (``clock.ManualClock`` lets a test move it).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphmem.domain.models import LEGACY_EMBEDDING_MODEL, MemoryItem
from graphmem.stores import SessionIndex, SessionLocks
from graphmem.stores.models import Enriched
from tests.support.fakes.clock import Clock
from tests.support.fakes.faults import Faults

Key = tuple[str, str]  # tenant, session


def _f32(vector: Sequence[float]) -> list[float]:
    """A vector as the Redis cache gives it back: float32 precision."""
    stored: list[float] = np.asarray(vector, dtype=np.float32).tolist()
    return stored


@dataclass
class _Session:
    #: item id → the item's JSON, in the order first put
    items: dict[str, str] = field(default_factory=dict)
    tokens: int = 0
    #: when items and tokens expire (refreshed by every put)
    expires: float = 0.0
    config: dict[str, str] = field(default_factory=dict)
    config_expires: float = 0.0
    #: the vector cache: "<id>" → vector, "<id>:x" → what else enrichment computed
    emb: dict[str, Any] = field(default_factory=dict)
    emb_model: str | None = None
    emb_expires: float = 0.0


class FakeSessionLocks:
    """One lock per session, in this process (the real ones are shared through Redis)."""

    def __init__(self) -> None:
        self._locks: dict[Key, asyncio.Lock] = {}
        #: sessions whose lock was taken, in order (tests check that work ran under it)
        self.taken: list[Key] = []

    def locked(self, tenant: str, session_id: str) -> bool:
        lock = self._locks.get((tenant, session_id))
        return lock is not None and lock.locked()

    @contextlib.asynccontextmanager
    async def hold(self, tenant: str, session_id: str) -> AsyncIterator[None]:
        lock = self._locks.setdefault((tenant, session_id), asyncio.Lock())
        async with lock:
            self.taken.append((tenant, session_id))
            yield


class FakeSessionIndex:
    def __init__(self, tier: FakeHotTier) -> None:
        self._tier = tier
        #: tenant → item id → session
        self.where: dict[str, dict[str, str]] = {}
        #: tenant → session → time of its last put
        self.written: dict[str, dict[str, float]] = {}
        self.over: dict[str, set[str]] = {}

    async def session_config(self, tenant: str, session_id: str) -> dict[str, Any]:
        self._tier.faults.check("session_config")
        s = self._tier._live(tenant, session_id)
        if s is None:
            return {}
        return {k: json.loads(v) for k, v in s.config.items()}

    async def set_session_config(
        self, tenant: str, session_id: str, overrides: dict[str, Any]
    ) -> None:
        self._tier.faults.check("set_session_config")
        s = self._tier._session(tenant, session_id)
        s.config = {k: json.dumps(v) for k, v in overrides.items()}
        s.config_expires = self._tier.clock() + self._tier.ttl

    async def tenants(self) -> list[str]:
        self._tier.faults.check("tenants")
        return [t for t, sessions in self.written.items() if sessions]

    async def idle_sessions(self, tenant: str, idle_since: float) -> list[str]:
        self._tier.faults.check("idle_sessions")
        return [s for s, at in self._ordered(tenant) if at <= idle_since]

    async def sessions(self, tenant: str) -> list[str]:
        return [s for s, _ in self._ordered(tenant)]

    async def mark_over_budget(self, tenant: str, session_id: str) -> None:
        self.over.setdefault(tenant, set()).add(session_id)

    async def over_budget(self, tenant: str) -> list[str]:
        return sorted(self.over.get(tenant, ()))

    async def clear_over_budget(self, tenant: str, session_id: str) -> None:
        self.over.get(tenant, set()).discard(session_id)

    async def drop_if_gone(self, tenant: str, session_id: str) -> bool:
        s = self._tier._live(tenant, session_id)
        if s is not None and s.items:
            return False
        self.written.get(tenant, {}).pop(session_id, None)
        self.over.get(tenant, set()).discard(session_id)
        return True

    def _ordered(self, tenant: str) -> list[tuple[str, float]]:
        # a sorted set's order: by score, then by member
        return sorted(self.written.get(tenant, {}).items(), key=lambda e: (e[1], e[0]))

    def record(self, tenant: str, session_id: str, ids: Sequence[str]) -> None:
        where = self.where.setdefault(tenant, {})
        for item_id in ids:
            where[item_id] = session_id
        self.written.setdefault(tenant, {})[session_id] = self._tier.clock()

    def forget_items(self, tenant: str, ids: Sequence[str]) -> None:
        where = self.where.get(tenant, {})
        for item_id in ids:
            where.pop(item_id, None)


class FakeHotTier:
    def __init__(
        self, ttl: int = 7 * 24 * 3600, clock: Clock = time.time, faults: Faults | None = None
    ) -> None:
        self.ttl = ttl
        self.clock = clock
        self.faults = faults or Faults()
        self._sessions: dict[Key, _Session] = {}
        self._index = FakeSessionIndex(self)
        # Declared as the protocol types, as the real tier does: HotTier's attributes are
        # settable, so a structural match needs these exact types.
        self.index: SessionIndex = self._index
        self.fake_locks = FakeSessionLocks()
        self.locks: SessionLocks = self.fake_locks
        self.closed = False

    # --- the store's own state ----------------------------------------------------------
    def _session(self, tenant: str, session_id: str) -> _Session:
        """The session's keys, created when absent (and emptied where they expired)."""
        s = self._sessions.setdefault((tenant, session_id), _Session())
        self._expire(s)
        return s

    def _live(self, tenant: str, session_id: str) -> _Session | None:
        s = self._sessions.get((tenant, session_id))
        if s is not None:
            self._expire(s)
        return s

    def _expire(self, s: _Session) -> None:
        now = self.clock()
        if s.items and now >= s.expires:
            s.items.clear()
            s.tokens = 0
        if s.config and now >= s.config_expires:
            s.config.clear()
        if (s.emb or s.emb_model is not None) and now >= s.emb_expires:
            s.emb.clear()
            s.emb_model = None

    # --- HotTier ------------------------------------------------------------------------
    async def ping(self) -> None:
        self.faults.check("ping")

    async def migrate(self) -> int:
        return 0

    async def put(
        self, tenant: str, session_id: str, items: Sequence[MemoryItem]
    ) -> tuple[int, dict[str, Any]]:
        self.faults.check("put")
        s = self._session(tenant, session_id)
        for item in items:
            old = s.items.get(item.id)
            if old is not None:
                s.tokens -= int(json.loads(old)["token_count"])
            s.items[item.id] = item.to_json()
            s.tokens += item.token_count
        expires = self.clock() + self.ttl
        s.expires = expires
        if s.config:
            s.config_expires = expires
        if s.emb:
            s.emb_expires = expires
        self._index.record(tenant, session_id, [i.id for i in items])
        return s.tokens, {k: json.loads(v) for k, v in s.config.items()}

    async def items(self, tenant: str, session_id: str) -> list[MemoryItem]:
        self.faults.check("items")
        s = self._live(tenant, session_id)
        return [] if s is None else [MemoryItem.from_json(d) for d in s.items.values()]

    async def get(self, tenant: str, session_id: str, ids: Sequence[str]) -> list[MemoryItem]:
        self.faults.check("get")
        s = self._live(tenant, session_id)
        if s is None:
            return []
        return [MemoryItem.from_json(s.items[i]) for i in ids if i in s.items]

    async def session_of(self, tenant: str, item_id: str) -> str | None:
        return self._index.where.get(tenant, {}).get(item_id)

    async def tokens(self, tenant: str, session_id: str) -> int:
        s = self._live(tenant, session_id)
        return 0 if s is None else s.tokens

    async def remove(self, tenant: str, session_id: str, ids: Sequence[str]) -> list[str]:
        self.faults.check("remove")
        s = self._live(tenant, session_id)
        if s is None or not ids:
            return []
        removed: list[str] = []
        for item_id in ids:
            old = s.items.pop(item_id, None)
            if old is None:
                continue
            s.tokens -= int(json.loads(old)["token_count"])
            s.emb.pop(item_id, None)
            s.emb.pop(f"{item_id}:x", None)
            removed.append(item_id)
        if not s.items:
            s.tokens = 0
            s.emb.clear()
            s.emb_model = None
        self._index.forget_items(tenant, removed)
        if not s.items:
            await self._index.drop_if_gone(tenant, session_id)
        return removed

    async def touch(self, tenant: str, session_id: str, items: Sequence[MemoryItem]) -> None:
        self.faults.check("touch")
        s = self._live(tenant, session_id)
        if s is None:
            return
        for item in items:
            if item.id in s.items:
                s.items[item.id] = item.to_json()

    async def embeddings(
        self, tenant: str, session_id: str, ids: Sequence[str], *, model: str
    ) -> dict[str, list[float]]:
        s = self._live(tenant, session_id)
        if s is None or not ids or (s.emb_model or LEGACY_EMBEDDING_MODEL) != model:
            return {}
        return {i: list(s.emb[i]) for i in ids if i in s.emb}

    async def cache_embeddings(
        self,
        tenant: str,
        session_id: str,
        vectors: Mapping[str, Sequence[float]],
        *,
        model: str,
    ) -> None:
        if vectors:
            self._keep(tenant, session_id, {i: _f32(v) for i, v in vectors.items()}, model)

    async def cached_model(self, tenant: str, session_id: str) -> str | None:
        s = self._live(tenant, session_id)
        if s is None or s.emb_model is None:
            return None
        return s.emb_model

    async def enrichment(
        self, tenant: str, session_id: str, ids: Sequence[str], *, model: str
    ) -> dict[str, Enriched]:
        s = self._live(tenant, session_id)
        if s is None or not ids or (s.emb_model or LEGACY_EMBEDDING_MODEL) != model:
            return {}
        found: dict[str, Enriched] = {}
        for item_id in ids:
            vector, extra = s.emb.get(item_id), s.emb.get(f"{item_id}:x")
            if vector is None or extra is None:
                continue
            found[item_id] = Enriched(
                vector=list(vector), sentences=extra["s"], entities=bool(extra["e"])
            )
        return found

    async def cache_enrichment(
        self, tenant: str, session_id: str, entries: Mapping[str, Enriched], *, model: str
    ) -> None:
        if not entries:
            return
        fields: dict[str, Any] = {}
        for item_id, e in entries.items():
            fields[item_id] = _f32(e.vector)
            fields[f"{item_id}:x"] = {"s": e.sentences or None, "e": e.entities}
        self._keep(tenant, session_id, fields, model)

    def _keep(self, tenant: str, session_id: str, fields: Mapping[str, Any], model: str) -> None:
        """Cache fields of items still in the session, dropping another model's first."""
        s = self._session(tenant, session_id)
        if s.emb_model != model:
            s.emb.clear()
        s.emb_model = model
        for name, value in fields.items():
            if name.removesuffix(":x") in s.items:
                s.emb[name] = value
        s.emb_expires = self.clock() + self.ttl

    async def close(self) -> None:
        self.closed = True
