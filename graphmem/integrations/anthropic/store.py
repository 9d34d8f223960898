"""The memory tool's files as graphmem memories, through the async client.

One file is one memory in the tool's graphmem session: its content is the file's text
(what search and recall rank), its metadata the path (``amPath``, how the file is found:
the ``memories`` query's metadata lookup) and size (``amBytes``). graphmem refuses blank
content, so a blank file's memory holds its path as content and the text in ``amText``.

graphmem has no atomic replace of a memory: an edit adds the new version, then forgets
the old one. Readers take the newest copy of a path, so a forget that fails leaves an
invisible stale copy (forgotten by the next write of the path), never a lost edit.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from graphmem.client import AsyncGraphmem, GraphmemError, MemoryItem, memory
from graphmem.integrations.anthropic.files import size_of

PATH, BYTES, BLANK = "amPath", "amBytes", "amText"

log = logging.getLogger("graphmem.integrations.anthropic")


def text_of(item: MemoryItem) -> str:
    blank = item.metadata.get(BLANK)
    return blank if isinstance(blank, str) else item.content


class FileStore:
    """The files of one graphmem session (and user), newest copy of a path last."""

    def __init__(
        self, client: AsyncGraphmem, session_id: str, user_id: str | None, memory_type: str
    ) -> None:
        self.client = client
        self.session_id = session_id
        self.user_id = user_id
        self.memory_type = memory_type

    async def _pages(self, values: Sequence[str] | None) -> list[MemoryItem]:
        found: list[MemoryItem] = []
        after: str | None = None
        while True:
            page = await self.client.memories(
                session_id=self.session_id,
                metadata_field=PATH,
                metadata_values=values,
                after=after,
            )
            found += [m for m in page.items if isinstance(m.metadata.get(PATH), str)]
            if page.next is None:
                return found
            after = page.next

    async def copies(self, path: str) -> list[MemoryItem]:
        """The memories holding a path, oldest first (more than one only while an edit
        replaces it, or after a forget that failed)."""
        return await self._pages([path])

    async def files(self) -> dict[str, list[MemoryItem]]:
        by_path: dict[str, list[MemoryItem]] = {}
        for item in await self._pages(None):
            by_path.setdefault(item.metadata[PATH], []).append(item)
        return by_path

    def spec(self, path: str, text: str) -> dict[str, Any]:
        metadata: dict[str, Any] = {PATH: path, BYTES: size_of(text)}
        if not text.strip():
            metadata[BLANK] = text
        return memory(
            self.session_id,
            text if text.strip() else path,
            type=self.memory_type,
            user_id=self.user_id,
            metadata=metadata,
        )

    async def write(self, path: str, text: str, old: Sequence[MemoryItem]) -> None:
        """One ``addMemory`` is the change: an error before it answers leaves the old
        file as it was. Forgetting the old copies and spilling the new one (so search
        ranks it at once) follow, and their failures are only logged."""
        (added,) = await self.client.add_many([self.spec(path, text)])
        await self.forget_quietly(old)
        await self.spill_quietly([added.id])

    async def forget_quietly(self, items: Sequence[MemoryItem]) -> None:
        for item in items:
            try:
                await self.client.forget(item.id)
            except GraphmemError as exc:
                log.warning("a stale copy of %s stays: %s", item.metadata.get(PATH), exc)

    async def spill_quietly(self, ids: list[str]) -> None:
        try:
            await self.client.spill(self.session_id, item_ids=ids)
        except GraphmemError as exc:
            # The enrichment worker writes it into the graph behind the add anyway.
            log.warning("memory files not spilled yet: %s", exc)
