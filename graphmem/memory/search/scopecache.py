"""Search scopes held in this process's memory, exactly as fresh as the graph.

A search in a session, a user or a small tenant reads its scope's version from Redis
(one round trip, ``stores/redis/versions.py``) and compares it with the version of the
view held here: the same, and the view serves; moved by a few writes, and the memories
they changed are read again and patched in; otherwise (another epoch, a log that does
not reach back, nothing held) the scope is read whole. Every write path bumps the
versions after its graph write (``changes.py``), so a view never misses a change another
replica made before the search began. Correctness does not rest on this process: a view
is only ever used at the version Redis holds now.

Bounded in bytes, least recently used out first. A scope larger than ``scope_limit``
memories, or whose view alone is larger than the bound, is not held (searched in the
graph; remembered as too large for a while, which is only a cost decision). When Redis
cannot be read, searches go to the graph. ``max_age`` bounds how long a view is trusted
without a full read, the one backstop for a bump lost with a Redis outage after the graph
write.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

from graphmem.cputime import in_thread
from graphmem.errors import GraphmemError
from graphmem.memory.search.scopeview import Pages, ScopeView
from graphmem.memory.writepath.changes import scope_key
from graphmem.stores import GraphSearch, ScopeVersions
from graphmem.stores.models import MemoryRows, ScopeTooLarge

log = logging.getLogger("graphmem.memory")
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class ByteLRU(Generic[K, V]):
    """A mapping bounded by the bytes its values declare, least recently used out first."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.bytes = 0
        self._items: OrderedDict[K, tuple[V, int]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: K) -> bool:
        return key in self._items

    def get(self, key: K) -> V | None:
        found = self._items.get(key)
        if found is None:
            return None
        self._items.move_to_end(key)
        return found[0]

    def put(self, key: K, value: V, size: int) -> bool:
        """Hold ``value`` unless it alone exceeds the bound; False when not held."""
        self.pop(key)
        if size > self.max_bytes:
            return False
        self._items[key] = (value, size)
        self.bytes += size
        while self.bytes > self.max_bytes:
            _, (_, dropped) = self._items.popitem(last=False)
            self.bytes -= dropped
        return True

    def pop(self, key: K) -> None:
        found = self._items.pop(key, None)
        if found is not None:
            self.bytes -= found[1]

    def clear(self) -> None:
        self._items.clear()
        self.bytes = 0


@dataclass(frozen=True)
class Held:
    view: ScopeView
    epoch: str
    version: str
    #: when the scope was last read whole (patches keep it): ``max_age`` counts from here
    read_at: float


Key = tuple[str, str]  # tenant, scope key
#: how many "too large" marks are held before the expired ones are dropped
TOO_LARGE_MARKS = 4096


class ScopeCache:
    def __init__(
        self,
        graph: GraphSearch,
        versions: ScopeVersions | None,
        dimension: int,
        max_bytes: int = 256 * 2**20,
        scope_limit: int = 20_000,
        max_age: float = 300.0,
        too_large_for: float = 600.0,
    ) -> None:
        self.graph = graph
        self.versions = versions
        self.dimension = dimension
        self.scope_limit = scope_limit
        self.max_age = max_age
        self.too_large_for = too_large_for
        self._held: ByteLRU[Key, Held] = ByteLRU(max_bytes)
        self._too_large: dict[Key, float] = {}
        self._reading: dict[tuple[Key, str, str], asyncio.Future[ScopeView | None]] = {}

    @property
    def enabled(self) -> bool:
        return self.versions is not None and self._held.max_bytes > 0

    def clear(self) -> None:
        self._held.clear()
        self._too_large.clear()

    @property
    def held_bytes(self) -> int:
        """What the views held now declare (``GRAPHMEM_SEARCH_CACHE_MB`` bounds it)."""
        return self._held.bytes

    def likely(self, tenant: str, session_id: str | None, user_id: str | None) -> bool:
        """Whether a search of this scope will probably be served a view (so that the
        reads it starts before knowing need not carry vectors)."""
        if not self.enabled:
            return False
        key = (tenant, scope_key(session_id, user_id))
        until = self._too_large.get(key)
        if until is not None and until < time.monotonic():
            del self._too_large[key]  # expired: worth another read
            until = None
        return until is None

    async def view(
        self, tenant: str, session_id: str | None, user_id: str | None
    ) -> ScopeView | None:
        """The scope's memories at the version Redis holds now, or None: search the
        graph instead."""
        if self.versions is None or not self.likely(tenant, session_id, user_id):
            return None
        key = (tenant, scope_key(session_id, user_id))
        held = self._held.get(key)
        aged = held is not None and time.monotonic() - held.read_at > self.max_age
        try:
            read = await self.versions.read(
                tenant, key[1], (held.epoch, held.version) if held else None
            )
        except GraphmemError as exc:  # Unavailable included: the graph still answers
            log.warning("scope versions unreadable, searching the graph: %s", exc.message)
            return None
        if held is not None and read.changed is not None and not read.changed:
            if aged:  # read it whole again, off this search's path
                self._flight(key, session_id, user_id, None, read.epoch, read.version, None)
            return held.view
        if aged:
            held = None
        running = self._flight(
            key, session_id, user_id, held, read.epoch, read.version, read.changed
        )
        return await asyncio.shield(running)

    def _flight(
        self,
        key: Key,
        session_id: str | None,
        user_id: str | None,
        held: Held | None,
        epoch: str,
        version: str,
        changed: frozenset[str] | None,
    ) -> asyncio.Future[ScopeView | None]:
        """One read per scope and version at a time, whoever asks for it."""
        flight = (key, epoch, version)
        running = self._reading.get(flight)
        if running is None:
            running = asyncio.ensure_future(
                self._read(key, session_id, user_id, held, epoch, version, changed)
            )
            self._reading[flight] = running
            running.add_done_callback(lambda done: self._landed(flight, done))
        return running

    def _landed(self, flight: tuple[Key, str, str], done: asyncio.Future[ScopeView | None]) -> None:
        self._reading.pop(flight, None)
        if not done.cancelled() and (exc := done.exception()) is not None:
            log.warning("reading scope %s failed: %s", flight[0], exc)

    async def _read(
        self,
        key: Key,
        session_id: str | None,
        user_id: str | None,
        held: Held | None,
        epoch: str,
        version: str,
        changed: frozenset[str] | None,
    ) -> ScopeView | None:
        tenant = key[0]
        now = time.monotonic()
        if held is not None and changed:
            rows = await self.graph.rows_by_ids(tenant, sorted(changed))
            view = held.view.patched(changed, _within(rows, session_id, user_id))
            read_at = held.read_at
        else:
            pages = Pages(self.dimension)
            try:
                async for rows in self.graph.scope_pages(
                    tenant, session_id, user_id, self.scope_limit + 1
                ):
                    pages.add(rows)
            except ScopeTooLarge:
                self._not_held(key, now)
                return None
            view = await _build(pages)
            read_at = now
        if len(view) > self.scope_limit:
            self._not_held(key, now)
            return None
        if not self._held.put(key, Held(view, epoch, version, read_at), view.nbytes):
            # Larger than the whole cache: held by no one, it would be read whole again for
            # every search of it, each read a transient of the scope's size. The graph's
            # indexes answer those searches instead.
            self._not_held(key, now)
        return view

    def _not_held(self, key: Key, now: float) -> None:
        """The scope is too large to hold: let its view go, and search it in the graph
        for ``too_large_for``."""
        self._held.pop(key)
        self._too_large[key] = now + self.too_large_for
        if len(self._too_large) > TOO_LARGE_MARKS:  # scopes never searched again
            for stale in [k for k, until in self._too_large.items() if until < now]:
                del self._too_large[stale]


async def _build(pages: Pages) -> ScopeView:
    # Indexing a few thousand rows is sub-millisecond; a large scope goes to a thread.
    if len(pages) > 4000:
        return await in_thread(pages.view)
    return pages.view()


def _within(rows: MemoryRows, session_id: str | None, user_id: str | None) -> MemoryRows:
    """The rows that belong to the scope (changed ids come from the tenant's log too)."""
    if session_id is not None:
        keep = [s == session_id for s in rows.sessions]
    elif user_id is not None:
        keep = [u == user_id for u in rows.users]
    else:
        return rows
    return rows if all(keep) else rows.select(keep)
