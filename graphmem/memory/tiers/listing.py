"""Listing: a scope's memories in every tier, page by page in conversation order, and the
sessions that hold memories. What integrations need to find a memory by a key of their
own kept in its metadata, and what export walks."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from graphmem.domain.models import MemoryItem
from graphmem.domain.moments import NOW, Moment
from graphmem.errors import BadInput
from graphmem.memory.inputs import Inputs
from graphmem.stores import GraphStore, HotTier

Cursor = tuple[int, str]
START: Cursor = (-1, "")


def _canonical(value: Any) -> str:
    # The form the graph keeps metadata in (rows.memory_row): sorted keys, no spaces.
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def _key(item: MemoryItem) -> Cursor:
    return (item.seq, item.id)


def cursor_text(item: MemoryItem) -> str:
    return f"{item.seq}:{item.id}"


#: ``<seq>:<id>``; ASCII digits only (``str.isdigit`` takes '²', which ``int`` refuses)
#: and few enough for a 64-bit graph integer
_CURSOR = re.compile(r"([0-9]{1,19}):([A-Za-z0-9_.@-]{1,128})")


def parse_cursor(text: str) -> Cursor:
    found = _CURSOR.fullmatch(text)
    if found is None or int(found[1]) >= 2**63:
        raise BadInput("after: not a cursor this query returned", field="after")
    return int(found[1]), found[2]


@dataclass(frozen=True)
class MetadataMatch:
    """Memories whose metadata has ``field`` (with ``values``: equal to one of them)."""

    field: str
    values: Sequence[Any] | None = None

    def needles(self) -> list[str]:
        """Substrings of the stored JSON text every match contains (one of): the graph
        narrows on them, ``accepts`` decides."""
        if self.values is None:
            return [_canonical(self.field) + ":"]
        return [_canonical({self.field: v})[1:-1] for v in self.values]

    def accepts(self, item: MemoryItem) -> bool:
        if self.field not in item.metadata:
            return False
        if self.values is None:
            return True
        # Compared as JSON text: in Python 1 == True, in JSON they differ.
        return _canonical(item.metadata[self.field]) in {_canonical(v) for v in self.values}


@dataclass(frozen=True)
class MemoryPage:
    items: list[MemoryItem]
    #: the cursor for the next page, None after the last; a page can hold fewer than
    #: ``first`` items (some filtered out) and still have a next one
    next: str | None


class Listing:
    def __init__(self, inputs: Inputs, hot: HotTier, graph: GraphStore) -> None:
        self.inputs = inputs
        self.hot = hot
        self.graph = graph

    async def page(
        self,
        tenant: str,
        session_id: str | None = None,
        user_id: str | None = None,
        match: MetadataMatch | None = None,
        first: int = 100,
        after: str | None = None,
        moment: Moment = NOW,
    ) -> MemoryPage:
        """The scope's memories in conversation order, as seen at ``moment``."""
        Inputs.scope(session_id, user_id)
        self.inputs.limit(first, "first")
        if match is not None and match.values is not None:
            if len(match.values) > self.inputs.limits.max_batch_items:
                raise BadInput(
                    f"metadataValues: at most {self.inputs.limits.max_batch_items}",
                    field="metadataValues",
                )
        start = parse_cursor(after) if after else START
        needles = match.needles() if match is not None else None
        graph = await self.graph.scans.page(
            tenant, session_id, user_id, start, first, needles, moment
        )
        hot = [
            i
            for i in await self._hot_items(tenant, session_id, user_id)
            if _key(i) > start
            and (match is None or match.accepts(i))
            and moment.holds(i.recorded, i.created_at, i.retracted_at)
        ]
        # The graph answered at most `first` rows; past its last one it may hold more
        # that sort before the hot items there, so the page ends at its last row.
        end = _key(graph[-1]) if len(graph) == first else None
        by_id = {i.id: i for i in graph}
        by_id |= {i.id: i for i in hot}  # a promoted memory's Redis copy is the live one
        window = sorted((i for i in by_id.values() if end is None or _key(i) <= end), key=_key)[
            :first
        ]
        more = len(window) == first or end is not None
        items = [i for i in window if match is None or match.accepts(i)]
        return MemoryPage(items, cursor_text(window[-1]) if more and window else None)

    async def sessions(
        self,
        tenant: str,
        prefix: str = "",
        user_id: str | None = None,
        first: int = 100,
        after: str | None = None,
    ) -> list[str]:
        """Ids of the sessions holding a memory in any tier, in id order."""
        Inputs.scope(None, user_id)
        self.inputs.limit(first, "first")
        found = set(await self.graph.scans.sessions(tenant, prefix, user_id, after or "", first))
        for sid in await self.hot.index.sessions(tenant):
            if sid.startswith(prefix) and sid > (after or "") and sid not in found:
                items = await self.hot.items(tenant, sid)
                if any(user_id is None or i.user_id == user_id for i in items):
                    found.add(sid)
        return sorted(found)[:first]

    async def _hot_items(
        self, tenant: str, session_id: str | None, user_id: str | None
    ) -> list[MemoryItem]:
        sessions = [session_id] if session_id else await self.hot.index.sessions(tenant)
        return [
            i
            for sid in sessions
            for i in await self.hot.items(tenant, sid)
            if user_id is None or i.user_id == user_id
        ]
