"""A stored value's searchable text, and LangGraph's search filters over values."""

from __future__ import annotations

import json
import operator
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from langgraph.store.base.embed import get_text_at_path

# graphmem's content limit; the full value is kept in the metadata regardless.
MAX_TEXT = 20_000

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "$eq": operator.eq,
    "$ne": operator.ne,
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
}


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for inner in value.values():
            yield from _strings(inner)
    elif isinstance(value, list | tuple):
        for inner in value:
            yield from _strings(inner)


def text_of(value: Mapping[str, Any], fields: Sequence[str] | None) -> str:
    """What graphmem embeds and ranks: the given fields (LangGraph's path syntax), or
    every string in the value. Ranking by meaning works on prose; JSON punctuation
    would only blur it, so JSON text is the last resort."""
    if fields:
        parts = [t for path in fields for t in get_text_at_path(value, path)]
    else:
        parts = list(_strings(value))
    text = "\n".join(p for p in parts if p.strip())
    if not text:
        text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text[:MAX_TEXT]


def _at(value: Mapping[str, Any], path: str) -> Any:
    node: Any = value
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def passes(value: Mapping[str, Any], conditions: Mapping[str, Any] | None) -> bool:
    """LangGraph's filter: each field equal to the given value, or meeting every
    ``$eq $ne $gt $gte $lt $lte`` operator given for it."""
    for path, wanted in (conditions or {}).items():
        actual = _at(value, path)
        if isinstance(wanted, Mapping) and wanted and all(k in _OPS for k in wanted):
            for op, operand in wanted.items():
                try:
                    if not _OPS[op](actual, operand):
                        return False
                except TypeError:  # e.g. None > 3: no match, as in LangGraph's stores
                    return False
        elif actual != wanted:
            return False
    return True
