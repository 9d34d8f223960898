"""``GraphmemSession``: the OpenAI Agents SDK's ``Session`` over one graphmem session.

Each item is one memory (``items.py``). ``add_items`` is one ``addMemories`` call, so a
call is stored whole or not at all; ``pop_item`` forgets the newest item and returns it
(graphmem's ``forget`` answers false for a memory already gone, so two pops never return
the same item); ``clear_session`` forgets every item, one ``forget`` each (graphmem has
no batch forget: a clear that fails midway leaves the items it had not reached).
"""

from __future__ import annotations

import uuid
from types import TracebackType
from typing import TYPE_CHECKING, Any

from agents.memory import SessionSettings
from agents.memory.session_settings import coerce_session_settings, resolve_session_limit

from graphmem.client import AsyncGraphmem, MemoryItem, memory
from graphmem.integrations.openai_agents.items import (
    ITEM,
    MAX_METADATA_BYTES,
    MAX_TEXT_CHARS,
    ItemError,
    check_user,
    in_order,
    item_of,
    memory_of,
    session_of,
)

if TYPE_CHECKING:
    from agents import TResponseInputItem

#: graphmem's addMemories takes at most this many memories per call
MAX_ITEMS_PER_CALL = 500
#: how often pop_item looks again when another caller took the newest item first
_POP_TRIES = 20


class GraphmemSession:
    """Conversation history for the Agents SDK in graphmem session ``oa.<session_id>``
    (with ``user_id``, owned by that user, so recall and export by user find it).

    ``max_text_chars`` and ``max_metadata_bytes`` are the server's limits (graphmem's
    defaults); an item past them is refused with ``ItemError`` before anything is sent."""

    session_settings: SessionSettings | None = None

    def __init__(
        self,
        session_id: str,
        url: str,
        key: str,
        *,
        user_id: str | None = None,
        memory_type: str = "MESSAGE",
        session_settings: SessionSettings | dict[str, Any] | None = None,
        max_text_chars: int = MAX_TEXT_CHARS,
        max_metadata_bytes: int = MAX_METADATA_BYTES,
        timeout: float = 60.0,
    ) -> None:
        self.session_id = session_id
        self.graphmem_session = session_of(session_id)
        self.user_id = check_user(user_id)
        self.memory_type = memory_type
        self.session_settings = (
            coerce_session_settings(session_settings)
            if session_settings is not None
            else SessionSettings()
        )
        self.max_text_chars = max_text_chars
        self.max_metadata_bytes = max_metadata_bytes
        self.client = AsyncGraphmem(url, key, timeout=timeout)

    async def close(self) -> None:
        await self.client.close()

    async def __aenter__(self) -> GraphmemSession:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    async def _memories(self) -> list[MemoryItem]:
        found: list[MemoryItem] = []
        after: str | None = None
        while True:
            page = await self.client.memories(
                session_id=self.graphmem_session, metadata_field=ITEM, after=after
            )
            found += [m for m in page.items if item_of(m) is not None]
            if page.next is None:
                return in_order(found)
            after = page.next

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The history in order; with a limit (or the settings'), its latest ``limit``
        items (0: none; a negative limit: all, as the SDK's SQLite session)."""
        wanted = resolve_session_limit(limit, self.session_settings)
        if wanted == 0:
            return []
        items: list[Any] = [item_of(m) for m in await self._memories()]
        return items[-wanted:] if wanted is not None and wanted > 0 else items

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        if not items:
            return
        if len(items) > MAX_ITEMS_PER_CALL:
            raise ItemError(f"at most {MAX_ITEMS_PER_CALL} items per add_items call")
        batch = uuid.uuid4().hex
        specs = []
        for index, item in enumerate(items):
            text, metadata = memory_of(
                item,
                index,
                batch,
                max_text=self.max_text_chars,
                max_metadata=self.max_metadata_bytes,
                index=index,
            )
            specs.append(
                memory(
                    self.graphmem_session,
                    text,
                    type=self.memory_type,
                    user_id=self.user_id,
                    metadata=metadata,
                )
            )
        await self.client.add_many(specs)

    async def pop_item(self) -> TResponseInputItem | None:
        for _ in range(_POP_TRIES):
            memories = await self._memories()
            if not memories:
                return None
            if await self.client.forget(memories[-1].id):
                item: Any = item_of(memories[-1])
                return item  # type: ignore[no-any-return]
        raise RuntimeError("pop_item: other callers kept taking the newest item; try again")

    async def clear_session(self) -> None:
        for found in await self._memories():
            await self.client.forget(found.id)
