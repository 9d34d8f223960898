"""The memory tool's files as graphmem store items, through the async client.

One file is one store item (docs/integrations.md#claudes-memory-tool) under the tool's
namespace: ``("users", userId, "memory-tool", sessionId)`` when it has a user (so
forgetUser erases the files with the rest of the user), ``("memory-tool", sessionId)``
otherwise. The key is the path (a path longer than an item key may be is keyed by its
hash); the value holds the path, the text and the size in bytes, and search ranks the
text alone (``index: ["text"]``).

Why items and not memories: a put is one MERGE on (namespace, key), so an edit, and a
rename's deletes and puts, are one server operation each. With memories an edit was an
add then a forget, and a crash between the two left two copies of a file, or a failed
add none of the new one; concurrent edits of a file could leave both. Files written that
way (graphmem of 2026-11-27: memories of the tool's session, the path in their metadata)
are moved into items by ``adopt`` the first time a tool uses the session.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from anthropic.lib.tools import ToolError

from graphmem.client import AsyncGraphmem, MemoryItem, item_put
from graphmem.integrations.anthropic.files import size_of
from graphmem.integrations.anthropic.paths import ROOT, canonical

#: the item store's key limit; a longer path is keyed by its hash
MAX_KEY = 200
#: puts one ``putItems`` takes, and items one listing page reads
MAX_PUTS, PAGE = 500, 1000
#: memories one ``forgetMemories`` takes, and one ``memories`` page reads
MAX_FORGETS, OLD_PAGE = 500, 100
#: the earlier layout's metadata: a file's path, and the text of a blank file (whose
#: memory held the path as content, since graphmem refuses blank content)
OLD_PATH, OLD_BLANK = "amPath", "amText"
#: a version time older than any write, for an old file whose memory has none
LONG_AGO = datetime(2000, 1, 1, tzinfo=UTC)

log = logging.getLogger("graphmem.integrations.anthropic")


def key_of(path: str) -> str:
    if len(path) <= MAX_KEY:
        return path
    return "sha256:" + hashlib.sha256(path.encode("utf-8")).hexdigest()


def _label(value: str) -> str:
    # namespace labels hold no period; tool ids may, and never a '%'
    return value.replace(".", "%2E")


def text_of(value: Mapping[str, Any]) -> str:
    text = value.get("text")
    return text if isinstance(text, str) else ""


class FileStore:
    """The files of one tool namespace, as {path: text}."""

    def __init__(self, client: AsyncGraphmem, session_id: str, user_id: str | None) -> None:
        self.client = client
        self.session_id = session_id
        self.user_id = user_id
        tool = ("memory-tool", _label(session_id))
        self.namespace = ("users", _label(user_id), *tool) if user_id else tool

    async def read(self, path: str) -> str | None:
        """A file's text; None when there is no such file."""
        (found,) = await self.client.get_items([(self.namespace, key_of(path))])
        if found is None or found.value.get("path") != path:
            return None
        return text_of(found.value)

    async def files(self) -> dict[str, str]:
        found: dict[str, str] = {}
        after: tuple[Sequence[str], str] | None = None
        while True:
            page = await self.client.store_items(self.namespace, after=after, first=PAGE)
            for item in page:
                # exactly this namespace: a session id may be another's prefix label
                path = item.value.get("path")
                if item.namespace == self.namespace and isinstance(path, str):
                    found[path] = text_of(item.value)
            if len(page) < PAGE:
                return found
            after = page[-1].namespace, page[-1].key

    def _put(self, path: str, text: str | None, as_of: datetime | None = None) -> dict[str, Any]:
        if text is None:
            return item_put(self.namespace, key_of(path), None)
        value = {"path": path, "text": text, "bytes": size_of(text)}
        return item_put(self.namespace, key_of(path), value, index=["text"], as_of=as_of)

    async def write(self, changes: Mapping[str, str | None]) -> None:
        """Write files (text) and delete them (None) in one ``putItems``: all of the
        changes or, refused, none. More than ``MAX_PUTS`` go in several."""
        puts = [self._put(path, text) for path, text in changes.items()]
        for start in range(0, len(puts), MAX_PUTS):
            await self.client.put_items(puts[start : start + MAX_PUTS])

    async def adopt(self) -> int:
        """Move the files of the earlier layout (memories of the tool's session) into
        items: the newest copy of each path is put as a version of its memory's time, so
        it never replaces an item written since (by another tool that moved it first and
        then edited it), and only then are the memories forgotten. A crash in between
        leaves both, and the next ``adopt`` finishes. Returns the files moved."""
        # a memory whose path the tool cannot have written is not a file: left alone
        files = [(path, m) for m in await self._old_files() if (path := _old_path(m))]
        newest: dict[str, MemoryItem] = {}
        for path, item in files:
            kept = newest.get(path)
            if kept is None or _time(item) >= _time(kept):
                newest[path] = item
        puts = [self._put(path, _old_text(m), as_of=_time(m)) for path, m in newest.items()]
        for start in range(0, len(puts), MAX_PUTS):
            await self.client.put_items(puts[start : start + MAX_PUTS])
        ids = [m.id for _, m in files]
        for start in range(0, len(ids), MAX_FORGETS):
            await self.client.forget_memories(ids[start : start + MAX_FORGETS])
        if puts:
            log.info(
                "moved %d memory-tool files of session %s into items", len(puts), self.session_id
            )
        return len(puts)

    async def _old_files(self) -> list[MemoryItem]:
        found: list[MemoryItem] = []
        after: str | None = None
        while True:
            page = await self.client.memories(
                session_id=self.session_id, metadata_field=OLD_PATH, first=OLD_PAGE, after=after
            )
            found += page.items
            if page.next is None:
                return found
            after = page.next


def _old_path(item: MemoryItem) -> str | None:
    try:
        path = canonical(item.metadata.get(OLD_PATH))
    except ToolError:
        return None
    return None if path == ROOT else path


def _old_text(item: MemoryItem) -> str:
    blank = item.metadata.get(OLD_BLANK)
    return blank if isinstance(blank, str) else item.content


def _time(item: MemoryItem) -> datetime:
    # when graphmem learned it: the write's own time (createdAt is when it happened)
    return item.recorded_at or item.created_at or LONG_AGO
