"""A stored value's searchable text, and LangGraph's search filters over values."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from graphmem.errors import BadInput

#: characters of an item's text that BM25 ranks (its value is kept whole regardless)
MAX_TEXT = 20_000
#: characters of that text that are embedded (the model reads a few hundred tokens)
MAX_EMBEDDED = 2_000
MAX_INDEX_PATHS = 32
_PART = re.compile(r"([^.\[\]]+)|\[(\*|-?\d+)\]")
_OPS = frozenset({"$eq", "$ne", "$gt", "$gte", "$lt", "$lte"})


def _strings(value: Any) -> Iterator[str]:
    # iterative: a deep value must not exhaust the stack
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            yield node
        elif isinstance(node, Mapping):
            stack.extend(reversed(list(node.values())))
        elif isinstance(node, list):
            stack.extend(reversed(node))


def _at(value: Any, path: str) -> Iterator[Any]:
    """The values at a LangGraph index path: ``a.b``, ``a[0]``, ``a[-1]``, ``a[*].b``;
    ``$`` is the whole value."""
    nodes = [value]
    if path == "$":
        yield value
        return
    for name, index in _PART.findall(path):
        found: list[Any] = []
        for node in nodes:
            if name and isinstance(node, Mapping) and name in node:
                found.append(node[name])
            elif index == "*" and isinstance(node, list):
                found.extend(node)
            elif index and index != "*" and isinstance(node, list):
                n = int(index)
                if -len(node) <= n < len(node):
                    found.append(node[n])
        nodes = found
    yield from nodes


def check_index(paths: Sequence[str] | None) -> list[str] | None:
    if paths is None:
        return None
    if len(paths) > MAX_INDEX_PATHS:
        raise BadInput(f"index: at most {MAX_INDEX_PATHS} paths", field="index")
    for path in paths:
        if not path or len(path) > 256:
            raise BadInput("index: each path has 1 to 256 characters", field="index")
    return list(paths)


def text_of(value: Mapping[str, Any], fields: Sequence[str] | None) -> str:
    """What search ranks an item by: the strings at ``fields``, or every string in the
    value. Ranking by meaning works on prose; JSON punctuation would only blur it."""
    roots = [v for path in fields for v in _at(value, path)] if fields else [value]
    text = "\n".join(s for s in _strings(roots) if s.strip())
    return text[:MAX_TEXT]


def _compare(actual: Any, wanted: Any) -> bool:
    if isinstance(wanted, Mapping):
        if wanted and all(k in _OPS for k in wanted):
            return all(_operator(actual, op, operand) for op, operand in wanted.items())
        return isinstance(actual, Mapping) and all(
            _compare(actual.get(k), v) for k, v in wanted.items()
        )
    if isinstance(wanted, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(wanted)
            and all(_compare(a, w) for a, w in zip(actual, wanted, strict=True))
        )
    return bool(actual == wanted)


def _operator(actual: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(actual == operand)
    if op == "$ne":
        return bool(actual != operand)
    numbers = (int, float)
    if not (isinstance(actual, numbers) and isinstance(operand, numbers)):
        # order between a string and a string, else no match (JSONB compares alike)
        if not (isinstance(actual, str) and isinstance(operand, str)):
            return False
    if isinstance(actual, bool) or isinstance(operand, bool):
        return False
    if op == "$gt":
        return bool(actual > operand)
    if op == "$gte":
        return bool(actual >= operand)
    if op == "$lt":
        return bool(actual < operand)
    return bool(actual <= operand)


def _field(value: Mapping[str, Any], key: str) -> Any:
    """A top-level field, or a dotted path into nested objects."""
    if key in value:
        return value[key]
    node: Any = value
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def passes(value: Mapping[str, Any], conditions: Mapping[str, Any] | None) -> bool:
    """LangGraph's filter: each field equal to the given value (nested objects match
    field by field), or meeting every ``$eq $ne $gt $gte $lt $lte`` operator given."""
    return all(_compare(_field(value, k), w) for k, w in (conditions or {}).items())


def check_filter(conditions: Any) -> dict[str, Any] | None:
    if conditions is None:
        return None
    if not isinstance(conditions, dict):
        raise BadInput("filter: a JSON object", field="filter")
    for wanted in conditions.values():
        if isinstance(wanted, dict) and any(k.startswith("$") for k in wanted):
            unknown = [k for k in wanted if k not in _OPS]
            if unknown:
                raise BadInput(
                    f"filter: unknown operator {unknown[0][:40]!r} (known: {sorted(_OPS)})",
                    field="filter",
                )
    return conditions
