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
add none of the new one; concurrent edits of a file could leave both.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from graphmem.client import AsyncGraphmem, item_put
from graphmem.integrations.anthropic.files import size_of

#: the item store's key limit; a longer path is keyed by its hash
MAX_KEY = 200
#: puts one ``putItems`` takes, and items one listing page reads
MAX_PUTS, PAGE = 500, 1000


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

    def _put(self, path: str, text: str | None) -> dict[str, Any]:
        if text is None:
            return item_put(self.namespace, key_of(path), None)
        value = {"path": path, "text": text, "bytes": size_of(text)}
        return item_put(self.namespace, key_of(path), value, index=["text"])

    async def write(self, changes: Mapping[str, str | None]) -> None:
        """Write files (text) and delete them (None) in one ``putItems``: all of the
        changes or, refused, none. More than ``MAX_PUTS`` go in several."""
        puts = [self._put(path, text) for path, text in changes.items()]
        for start in range(0, len(puts), MAX_PUTS):
            await self.client.put_items(puts[start : start + MAX_PUTS])
