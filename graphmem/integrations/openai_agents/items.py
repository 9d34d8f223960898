"""Agents SDK session items as graphmem memories, and back.

An item (a ``TResponseInputItem``: a JSON object) is one memory: its content is the
item's text (what search and recall rank), its metadata the item itself (``oaItem``),
its position in the ``add_items`` call that added it (``oaSeq``) and that call's id
(``oaBatch``). graphmem lists a session in the order its memories were added; items of
one call keep their own order and stay together even when two calls ran at once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from graphmem.client import MemoryItem

ITEM, SEQ, BATCH = "oaItem", "oaSeq", "oaBatch"
PREFIX = "oa."
#: graphmem's default limits: content characters, and bytes of a memory's metadata JSON
MAX_TEXT_CHARS = 20_000
MAX_METADATA_BYTES = 16_384
_MAX_ID = 128
_SAFE = re.compile(r"[A-Za-z0-9-]")
_ID = re.compile(r"[A-Za-z0-9_.@-]{1,128}")
#: the fields of Responses input items that hold what was said or done
_TEXT_FIELDS = ("text", "refusal", "transcript", "arguments", "output", "content", "summary")


class ItemError(ValueError):
    """An item graphmem cannot keep (too large, not a JSON object): nothing was stored."""


def session_of(session_id: str) -> str:
    """The graphmem session of an SDK session id: ``oa.`` and the id, every character
    outside A-Z a-z 0-9 - written as ``_XX`` per UTF-8 byte (graphmem's id alphabet)."""
    encoded = "".join(
        c if _SAFE.fullmatch(c) else "".join(f"_{b:02X}" for b in c.encode("utf-8"))
        for c in session_id
    )
    session = PREFIX + encoded
    if not session_id or len(session) > _MAX_ID:
        raise ValueError(
            f"session_id must be 1 character or more, and at most {_MAX_ID} once encoded "
            f"for graphmem (got {len(session)})"
        )
    return session


def check_user(user_id: str | None) -> str | None:
    if user_id is not None and not _ID.fullmatch(user_id):
        raise ValueError("user_id must be 1-128 characters of A-Z a-z 0-9 _ . @ -")
    return user_id


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for field in _TEXT_FIELDS:
            if field in value:
                yield from _strings(value[field])
    elif isinstance(value, list):
        for part in value:
            yield from _strings(part)


def text_of(item: Mapping[str, Any]) -> str:
    """The words of an item: message text, refusals, tool names with their arguments
    and outputs, reasoning summaries; its type when it has none (graphmem keeps no
    blank memory)."""
    parts = [s for s in _strings(item) if s.strip()]
    if isinstance(item.get("name"), str):
        parts.insert(0, item["name"])
    text = "\n".join(parts)
    if text.strip():
        return text
    return str(item.get("type") or item.get("role") or "item")


def memory_of(
    item: Any, seq: int, batch: str, *, max_text: int, max_metadata: int, index: int
) -> tuple[str, dict[str, Any]]:
    """(content, metadata) of one item; ``ItemError`` for one graphmem would refuse."""
    if not isinstance(item, Mapping):
        raise ItemError(f"item {index}: must be a JSON object, got {type(item).__name__}")
    metadata = {ITEM: dict(item), SEQ: seq, BATCH: batch}
    try:
        size = len(json.dumps(metadata, separators=(",", ":"), allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise ItemError(f"item {index}: not JSON ({exc})") from exc
    if size > max_metadata:
        raise ItemError(
            f"item {index}: {size} bytes of JSON; graphmem keeps at most {max_metadata} "
            "bytes of metadata per memory"
        )
    text = text_of(item)
    if len(text) > max_text:
        raise ItemError(
            f"item {index}: its text is {len(text)} characters; graphmem keeps at most "
            f"{max_text} per memory"
        )
    return text, metadata


def in_order(memories: Sequence[MemoryItem]) -> list[MemoryItem]:
    """Session memories in graphmem's order, each call's items together and in their
    own order (placed where the call's first item is)."""
    first: dict[str, int] = {}
    for position, memory in enumerate(memories):
        first.setdefault(str(memory.metadata.get(BATCH)), position)

    def key(memory: MemoryItem) -> tuple[int, int]:
        seq = memory.metadata.get(SEQ)
        return first[str(memory.metadata.get(BATCH))], seq if isinstance(seq, int) else 0

    return sorted(memories, key=key)


def item_of(memory: MemoryItem) -> dict[str, Any] | None:
    item = memory.metadata.get(ITEM)
    return item if isinstance(item, dict) else None
