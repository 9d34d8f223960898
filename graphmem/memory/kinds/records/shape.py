"""What a record schema's shape says about the cost of checking a record against it.

A schema is a graph: subschemas are nodes, and the keywords that apply a subschema are
edges, either to the same value (``allOf``, ``anyOf``, ``oneOf``, ``not``, ``if``/``then``/
``else``, ``dependentSchemas``, ``$ref``) or into a part of it (``properties``, ``items``
...). Checking a record walks this graph along the record, once for every route that
reaches a value. A recursive definition that can reach the same value by two routes
(both branches of an ``anyOf``, ``if`` and ``then``, a ``$ref`` beside a keyword that also
recurses, overlapping ``patternProperties``) doubles the work with each level of nesting.

``problem`` names the first such shape it finds, with the keyword and the place, so that
registration refuses it with a reason. It cannot see every costly schema (routes through
several recursive definitions in a row grow as depth^definitions): the step budget of
``record_validator`` stops those while they run.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import re2
import referencing.jsonschema
from jsonschema.validators import Draft3Validator, validator_for
from referencing import Registry
from referencing.exceptions import Unresolvable

#: ``uniqueItems`` needs a ``maxItems`` of at most this beside it
MAX_UNIQUE_ITEMS = 10_000
#: subschemas a schema may expand to through ``$ref`` (recursion aside)
MAX_EXPANSION = 100_000

# (keyword, how many subschemas, where they apply): "same" is the value itself
_SAME_ONE = ("not", "if", "then", "else")
_SAME_LIST = ("allOf", "anyOf", "oneOf")
_SAME_MAP = ("dependentSchemas", "dependencies")
_INTO_ONE = {
    "additionalProperties": ("rest",),
    "unevaluatedProperties": ("rest",),
    "propertyNames": ("names",),
    "additionalItems": ("rest-items",),
    "unevaluatedItems": ("rest-items",),
    "contains": ("contains",),
}
_ARRAY_PARTS = ("index", "every", "rest-items", "contains")
_DEFINITIONS = ("$defs", "definitions")


class Refused(Exception):
    """Why the schema is refused (the message)."""


@dataclass(frozen=True)
class _Edge:
    target: int
    label: str
    #: None: the same value; else which part of the value (for overlaps)
    part: tuple[str, ...] | None


@dataclass
class _Node:
    path: str
    schema: dict[str, Any]
    resolver: Any
    edges: list[_Edge] = field(default_factory=list)


def problem(schema: dict[str, Any]) -> str | None:
    """Why checking records against ``schema`` could take unbounded work, or None.
    Keywords whose values have the wrong type are passed over: the metaschema check,
    which runs after this one (it costs far more), refuses them."""
    try:
        nodes = _Graph(schema).nodes
        _no_loops(nodes)
        _one_route_per_recursion(nodes)
        _bounded_expansion(nodes)
    except Refused as refused:
        return str(refused)
    return None


def _pointer(path: str, *parts: object) -> str:
    escaped = (str(p).replace("~", "~0").replace("/", "~1") for p in parts)
    return "/".join([path, *escaped])


class _Graph:
    def __init__(self, schema: dict[str, Any]) -> None:
        dialect = schema.get("$schema")
        if dialect is not None and not isinstance(dialect, str):
            raise Refused("$schema must be the URI of a dialect")
        base = validator_for(schema, default=None) if dialect is not None else None
        if dialect is not None and (base is None or base is Draft3Validator):
            raise Refused(f"$schema {str(dialect)[:80]!r} is not a supported dialect")
        cls = base or validator_for(schema)
        self.spec = referencing.jsonschema.specification_with(
            cls.ID_OF(cls.META_SCHEMA) or "", default=referencing.jsonschema.DRAFT202012
        )
        self.root = schema
        self.nodes: list[_Node] = []
        self.index: dict[int, int] = {}
        self.contained: set[int] | None = None
        resolver = Registry().resolver_with_root(self.spec.create_resource(schema))
        pending = [self._add(schema, "#", resolver)]
        while pending:
            pending.extend(self._expand(self.nodes[pending.pop()]))

    def _add(self, schema: dict[str, Any], path: str, resolver: Any) -> int:
        self.index[id(schema)] = len(self.nodes)
        self.nodes.append(_Node(path, schema, resolver))
        return len(self.nodes) - 1

    def _expand(self, node: _Node) -> Iterator[int]:
        """Add ``node``'s edges; yield the nodes they added."""
        schema, path = node.schema, node.path
        if path != "#" and "$schema" in schema:
            raise Refused(f"$schema at {path}: only the root may name a dialect")
        for dynamic in ("$dynamicRef", "$recursiveRef"):
            if dynamic in schema:
                raise Refused(f"{dynamic} at {path} is not supported; use $ref")
        if schema.get("uniqueItems") is True:
            bound = schema.get("maxItems")
            if not isinstance(bound, int) or bound > MAX_UNIQUE_ITEMS:
                raise Refused(
                    f"uniqueItems at {path} needs maxItems (at most {MAX_UNIQUE_ITEMS:,}) beside it"
                )
        resolver = node.resolver.in_subresource(self.spec.create_resource(schema))
        for child, label, part, child_path in self._children(schema, path):
            if not isinstance(child, dict):
                continue  # true, false: nothing further
            known = self.index.get(id(child))
            if known is None:
                known = self._add(child, child_path, resolver)
                yield known
            if label is not None:
                node.edges.append(_Edge(known, label, part))
        if isinstance(ref := schema.get("$ref"), str):
            target, added = self._resolve(ref, path, resolver)
            if added and target is not None:
                yield target
            if target is not None:
                node.edges.append(_Edge(target, "$ref", None))

    def _children(
        self, schema: dict[str, Any], path: str
    ) -> Iterator[tuple[Any, str | None, tuple[str, ...] | None, str]]:
        """(subschema, label, part of the value it applies to, path) for each; the label
        is None for definitions, which apply only through a $ref."""
        for key in _SAME_ONE:
            if key in schema:
                yield schema[key], key, None, _pointer(path, key)
        for key in _SAME_LIST:
            for i, sub in enumerate(_list(schema.get(key))):
                yield sub, f"{key}/{i}", None, _pointer(path, key, i)
        for key in _SAME_MAP:
            for name, sub in _map(schema.get(key)).items():
                yield sub, f"{key}/{name}", None, _pointer(path, key, name)
        for name, sub in _map(schema.get("properties")).items():
            yield sub, f"properties/{name}", ("key", name), _pointer(path, "properties", name)
        for pattern, sub in _map(schema.get("patternProperties")).items():
            label = f"patternProperties/{pattern}"
            yield sub, label, ("pattern", pattern), _pointer(path, "patternProperties", pattern)
        for key, part in _INTO_ONE.items():
            if key in schema:
                yield schema[key], key, part, _pointer(path, key)
        items = schema.get("items")
        if isinstance(items, list):
            for i, sub in enumerate(items):
                yield sub, f"items/{i}", ("index", str(i)), _pointer(path, "items", i)
        elif items is not None:
            part = ("rest-items",) if "prefixItems" in schema else ("every",)
            yield items, "items", part, _pointer(path, "items")
        for i, sub in enumerate(_list(schema.get("prefixItems"))):
            yield sub, f"prefixItems/{i}", ("index", str(i)), _pointer(path, "prefixItems", i)
        for key in _DEFINITIONS:
            for name, sub in _map(schema.get(key)).items():
                yield sub, None, None, _pointer(path, key, name)

    def _resolve(self, ref: str, path: str, resolver: Any) -> tuple[int | None, bool]:
        try:
            resolved = resolver.lookup(ref)
        except (Unresolvable, ValueError, KeyError, TypeError, IndexError):
            raise Refused(
                f"$ref {ref[:80]!r} at {path} does not resolve inside the schema "
                "(remote references are not fetched)"
            ) from None
        target = resolved.contents
        if isinstance(target, bool):
            return None, False  # true or false: nothing further
        if not isinstance(target, dict):
            raise Refused(f"$ref {ref[:80]!r} at {path} does not point to a schema")
        if (known := self.index.get(id(target))) is not None:
            return known, False
        if id(target) not in self._contained():
            raise Refused(f"$ref {ref[:80]!r} at {path} points outside the schema")
        return self._add(target, f"{ref[:80]} (from {path})", resolved.resolver), True

    def _contained(self) -> set[int]:
        if self.contained is None:
            self.contained = set()
            stack: list[Any] = [self.root]
            while stack:
                value = stack.pop()
                if isinstance(value, dict | list):
                    self.contained.add(id(value))
                    stack.extend(value.values() if isinstance(value, dict) else value)
        return self.contained


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _components(nodes: list[_Node], same_only: bool = False) -> list[int]:
    """Each node's strongly connected component (Tarjan, without recursion: a schema's
    $ref chains may be long), numbered so that a component reachable from another has
    the smaller number."""
    edges = [[e.target for e in node.edges if not same_only or e.part is None] for node in nodes]
    order, low, comp = [-1] * len(nodes), [0] * len(nodes), [-1] * len(nodes)
    stack: list[int] = []
    on_stack = [False] * len(nodes)
    counter = components = 0
    for start in range(len(nodes)):
        if order[start] != -1:
            continue
        work = [(start, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                order[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack[v] = True
            if i < len(edges[v]):
                work.append((v, i + 1))
                w = edges[v][i]
                if order[w] == -1:
                    work.append((w, 0))
                elif on_stack[w]:
                    low[v] = min(low[v], order[w])
                continue
            if low[v] == order[v]:
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    comp[w] = components
                    if w == v:
                        break
                components += 1
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return comp


def _recursive(nodes: list[_Node], comp: list[int]) -> list[bool]:
    """Whether each node lies on a cycle: in a component of several nodes, or on a
    keyword that leads back to itself."""
    sizes: dict[int, int] = {}
    for c in comp:
        sizes[c] = sizes.get(c, 0) + 1
    return [
        sizes[comp[v]] > 1 or any(e.target == v for e in node.edges) for v, node in enumerate(nodes)
    ]


def _no_loops(nodes: list[_Node]) -> None:
    """A cycle of keywords that all apply to the same value never ends."""
    comp = _components(nodes, same_only=True)
    looping = [
        (node, edge)
        for v, node in enumerate(nodes)
        for edge in node.edges
        if edge.part is None and comp[edge.target] == comp[v]
    ]
    if looping:  # name a $ref of the loop: that is what closes it
        node, edge = next((p for p in looping if p[1].label == "$ref"), looping[0])
        raise Refused(
            f"the {edge.label} at {node.path} loops back to {nodes[edge.target].path} "
            "without descending into the data (checking would never end)"
        )


def _one_route_per_recursion(nodes: list[_Node]) -> None:
    """Refuse a recursive definition that can reach one value by two routes."""
    comp = _components(nodes)
    for v, recursive in enumerate(_recursive(nodes, comp)):
        inside = [e for e in nodes[v].edges if comp[e.target] == comp[v]]
        if recursive and len(inside) > 1 and (pair := _two_routes(inside)) is not None:
            raise Refused(
                f"{nodes[v].path} reaches its recursive definition by two routes for one "
                f"value ({pair[0].label} and {pair[1].label}), so checking a record would "
                "double with each level of nesting; let each value recurse through one "
                "branch only"
            )


def _two_routes(edges: list[_Edge]) -> tuple[_Edge, _Edge] | None:
    """Two of one schema's keywords (all leading back into its recursion) that can apply
    to the same value, or None. Linear in the keywords: a schema may have thousands."""
    same = [e for e in edges if e.part is None]
    if same:  # it applies to the value itself, beside another route
        return same[0], next(e for e in edges if e is not same[0])
    by_kind: dict[str, list[_Edge]] = {}
    for edge in edges:
        by_kind.setdefault(edge.part[0] if edge.part else "", []).append(edge)
    patterns, keys = by_kind.get("pattern", []), by_kind.get("key", [])
    if len(patterns) > 1:
        return patterns[0], patterns[1]
    for pattern in patterns:
        regex = re2.compile(pattern.part[1] if pattern.part else "")
        for key in keys:
            if key.part and regex.search(key.part[1]):
                return key, pattern
    array = [e for kind in _ARRAY_PARTS for e in by_kind.get(kind, [])]
    if by_kind.get("contains") and len(array) > 1:
        return by_kind["contains"][0], next(e for e in array if e.part != ("contains",))
    if by_kind.get("every") and by_kind.get("index"):
        return by_kind["every"][0], by_kind["index"][0]
    return None


def _bounded_expansion(nodes: list[_Node]) -> None:
    """Refuse a schema that $ref expands past ``MAX_EXPANSION`` subschemas (a definition
    that names the one before it twice, thirty times over, is 2^30 subschemas)."""
    comp = _components(nodes)
    ranked = sorted(range(len(nodes)), key=lambda v: comp[v])  # sinks first
    size = [0] * len(nodes)
    for v in ranked:
        outside = [e for e in nodes[v].edges if comp[e.target] != comp[v]]
        size[v] = 1 + sum(size[e.target] for e in outside)
        if size[v] > MAX_EXPANSION:
            heaviest = max(outside, key=lambda e: size[e.target])
            raise Refused(
                f"{nodes[v].path} expands to more than {MAX_EXPANSION:,} subschemas "
                f"through $ref (its {heaviest.label} repeats a large definition)"
            )
