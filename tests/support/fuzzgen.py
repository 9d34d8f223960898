"""A deterministic generator of hostile requests, and the oracle they are judged by.

Shared by ``tests/integration/test_fuzz.py`` (in-process app) and ``bench/fuzz.py`` (a real
``graphmem serve``). Every Query, Mutation and Subscription field of ``schema.graphql`` is
an operation (read from the SDL with graphql-core, so new operations are covered without
a change here), as is every MCP tool (the four tier tools and the nine memory-server
tools, read from ``graphmem.api.mcp.TOOLS``), and a list of raw-body attacks.

The oracle: status < 500; every GraphQL error (and every MCP tool error) carries a code
that is not INTERNAL; no message names internals (tracebacks, file names, driver or
library text, Cypher query names).
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from graphql import (
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLList,
    GraphQLNamedType,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLScalarType,
    GraphQLSchema,
    build_schema,
    get_named_type,
)
from graphql.pyutils import Undefined

from graphmem.api import mcp as mcp_tools

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "schema.graphql"
CYPHER = ROOT / "graphmem" / "stores" / "neo4j" / "cypher"

#: every MCP tool the server lists: a new tool without arguments here fails the generator
MCP_TOOLS = [t.name for t in mcp_tools.TOOLS]
TIER_TOOLS = ["memory_add", "memory_recall", "memory_spill", "memory_status"]
#: entity names the memory-server tools share, so relations and observations often land
KG_NAMES = ["Ada", "Acme", "London", "ada", "Paris", "Fuzz_Entity"]
TOOL_TYPES = ["message", "fact", "decision", "entity", "context", "preference"]
RAW_KINDS = [
    "malformed_json",
    "non_utf8",
    "bare_scalar",
    "batch_array",
    "empty_body",
    "wrong_content_type",
    "get_request",
    "bad_auth",
    "bad_envelope",
    "syntax_error",
    "multiple_operations",
    "depth_bomb",
    "alias_bomb",
    "fragment_cycle",
    "directive_abuse",
    "huge_query",
    "oversized_body",
    "deep_variables",
    "json_extremes",
    "introspection",
    "wrong_method",
    "mcp_raw",
]
CODES = {"BAD_INPUT", "UNAUTHENTICATED", "FORBIDDEN", "NOT_FOUND", "UNAVAILABLE", "INTERNAL"}

# ---------------------------------------------------------------------------- values

SENTENCES = [
    "Ada Lovelace met Charles Babbage in London.",
    "The budget is $50K for the Paris launch.",
    "Grace Hopper works at the Navy on COBOL.",
    "We decided to ship on Friday.",
    "Alice prefers tea over coffee.",
    "Acme Corp moved its office to Berlin in 2021.",
    "persona traits: concise and friendly",
]
SESSIONS = ["s1", "s2", "s3", "fuzz-a", "fuzz_b"]
USERS = ["u1", "u2", "user-3"]
AGENTS = ["agent1", "agent-2"]
SCHEMAS = ["person", "ints", "open"]
ENTITY_IDS = ["PERSON|ada lovelace", "PERSON|charles babbage", "PLACE|london", "ORG|acme corp"]
BY_NAME: dict[str, list[Any]] = {
    "sessionId": SESSIONS,
    "userId": USERS,
    "agentId": AGENTS,
    "schema": SCHEMAS,
    "name": SCHEMAS,
    "key": ["k1", "k2", "plan"],
    "role": ["user", "assistant", "planner"],
    "tone": ["dry", "warm"],
    "alias": ["NYC", "Ada", "Babbage"],
    "canonical": ["New York City", "PERSON|ada lovelace", "Charles Babbage"],
    "surface": ["Ada", "Lovelace", "Babbage"],
    "owner": ["alice", "bob"],
    "toOwner": ["bob", "carol"],
    "fromOwner": ["alice", "bob"],
    "status": ["completed", "failed-ish", "done"],
    "kind": ["recovery", "summary", "success_rate"],
    "signature": ["csv:a,b", "json:x,y"],
    "reason": ["", "duplicate"],
    "outcome": ["worked", "did not work"],
    "description": ["import the csv file", "map the columns"],
    "action": ["open file", "parse rows", "map columns"],
    "result": ["ok", "error: bad row"],
    "trait": ["answers briefly", "likes tables"],
    "id": ENTITY_IDS,
    "sourceId": ENTITY_IDS,
    "targetId": ENTITY_IDS,
}
TEXT_ARGS = {"content", "query", "text"}
LIMIT_ARGS = {"limit", "last", "count", "keepNewest", "generation"}

HOSTILE_STRINGS = [
    "",
    " ",
    "\n\t ",
    "\ud800",
    "a\udfffb",
    "nul\x00byte",
    "😀" * 10,
    "has space",
    "a:b",
    "{tag}",
    "x" * 129,
    "é" * 128,
    "'; MATCH (n) DETACH DELETE n //",
    "\\",
    '"',
    "%s%n%x",
    "../../etc/passwd",
    "<script>alert(1)</script>",
    "\u202eevil",
    "zero\u200bwidth",
    "null",
    "0",
    "a\u0301\u0301\u0301",
    "\x7f\x01\x1b[31m",
    "$where",
    "__proto__",
]
HOSTILE_INTS: list[Any] = [
    0,
    -1,
    -(2**31),
    2**31,
    2**31 - 1,
    2**63 + 1,
    -(2**63) - 1,
    10**30,
    1.5,
    "5",
    True,
    [],
    {},
    1e308,
]
HOSTILE_FLOATS: list[Any] = [
    1e308,
    -1e308,
    "NaN",
    "Infinity",
    "-Infinity",
    -0.0,
    5e-324,
    0,
    -1,
    2,
    "0.5",
    True,
    2**63 + 1,
    [],
]
HOSTILE_DATES: list[Any] = [
    "2020-01-01",
    "2020-01-01T00:00:00",
    "2020-13-45T99:00:00Z",
    "0001-01-01T00:00:00+14:00",
    "9999-12-31T23:59:59-14:00",
    "2020-01-01T00:00:00+25:00",
    "",
    "now",
    0,
    1e308,
    "\ud800",
    "-000001-01-01T00:00:00Z",
    "2020-01-01T00:00:00+23:59",
    "2020-01-01T00:00:00+18:00:30",
]
#: asOf and validAt (docs/concepts.md, "Two clocks"): valid, but far out or offset
MOMENTS = [
    "0001-01-01T00:00:00Z",
    "0001-01-01T00:00:00+18:00",
    "9999-12-31T23:59:59.999999Z",
    "9999-12-31T23:59:59-18:00",
    "2020-06-01T00:00:00+05:45",
    "2099-01-01T00:00:00Z",
    "2024-05-01T10:00:00+00:00",
]
HOSTILE_BOOLS: list[Any] = ["true", 1, 0, "yes", [], {}]
FORBIDDEN_IN_INPUT = re.compile(
    r"traceback|file \"|\.py|neo4j\.|redis\.|pydantic|cypher|graph query|failed", re.I
)


def cypher_names() -> list[str]:
    """``memory/fulltext_search`` ... every query file the product ships."""
    return sorted(
        f"{p.parent.name}/{p.stem}" for p in CYPHER.glob("*/*.cypher") if p.parent.is_dir()
    )


def nested_json(depth: int, rng: random.Random) -> Any:
    value: Any = {"leaf": 1}
    for i in range(depth):
        value = [value] if rng.random() < 0.3 else {f"k{i % 3}": value}
    return value


def hostile_json(rng: random.Random) -> Any:
    choice = rng.randrange(16)
    if choice == 0:
        return nested_json(rng.randint(10, 100), rng)
    if choice == 1:
        return [1, "two", None, 3.5]
    if choice == 2:
        return "a string"
    if choice == 3:
        return 2**64
    if choice == 4:
        return 1e308
    if choice == 5:
        return None
    if choice == 6:
        return {"": 1, "\ud800": "x", "nul\x00": 2}
    if choice == 7:
        return {f"k{i}": i for i in range(300)}
    if choice == 8:
        return {"blob": "y" * 25_000}
    if choice == 9:
        return {"n": -(2**63) - 1, "f": -1e308}
    if choice == 10:
        return True
    if choice == 11:
        return {"$where": "1", "__proto__": {"x": 1}}
    if choice == 12:
        return {"list": [[[[[]]]]], "emoji": "😀"}
    if choice == 13:
        return 0
    if choice == 14:
        return {"type": "object", "properties": {"x": {"type": "string", "pattern": "(a)\\1"}}}
    return {"type": "object", "properties": {"code": {"type": "string", "pattern": "^(a+)+$"}}}


def valid_json(arg: str, rng: random.Random) -> Any:
    if arg == "schema":
        return rng.choice(
            [
                {
                    "type": "object",
                    "properties": {"n": {"type": "integer"}, "name": {"type": "string"}},
                },
                {
                    "type": "object",
                    "required": ["name"],
                    "properties": {"name": {"type": "string"}},
                },
                {"type": "object"},
            ]
        )
    if arg in ("data", "where"):
        return rng.choice([{"n": 1, "name": "Ada"}, {"name": "Bob"}, {"n": 2}, {}])
    if arg == "mappings":
        return rng.choice([{"a": "name", "b": "email"}, {"a": "title"}])
    if arg == "metrics":
        return {"rows": rng.randint(0, 100), "seconds": 1.5}
    if arg == "metadata":
        return rng.choice([{"speaker": "Ada"}, {"nested": {"list": [1, 2.5, None, "x"]}}, {}])
    return rng.choice([{"x": 1}, [1, 2], "v", 3, True, None])


# ---------------------------------------------------------------------------- requests


@dataclass
class Request:
    op: str  # Query.hot, Mutation.addMemory, mcp.memory_add, raw.non_utf8 ...
    method: str = "POST"
    path: str = "/graphql"
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    query: str | None = None
    variables: Any = None
    tool: str | None = None
    arguments: Any = None
    note: str = ""
    auth: str = "a"  # a, b (the second tenant), none, or raw (headers carry their own)

    def reproducer(self, limit: int = 300) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.op, "method": self.method, "path": self.path}
        if self.note:
            out["note"] = self.note
        if self.query is not None:
            out["query"] = shorten(self.query, 5000)
            out["variables"] = shorten(self.variables, limit)
        elif self.tool is not None:
            out["tool"] = self.tool
            out["arguments"] = shorten(self.arguments, limit)
        else:
            out["body"] = shorten(self.body.decode("utf-8", "backslashreplace"), limit * 2)
        headers = {k: v for k, v in self.headers.items() if k.lower() != "authorization"}
        if headers:
            out["headers"] = headers
        out["auth"] = self.auth
        return out


def shorten(value: Any, limit: int = 300, depth: int = 0) -> Any:
    """A printable copy: long strings cut, deep nesting summarised."""
    if isinstance(value, str):
        if len(value) > limit:
            return f"{value[:60]}…({len(value)} chars)"
        return value
    if depth > 8:
        return f"<{type(value).__name__} nested deeper>"
    if isinstance(value, dict):
        items = list(value.items())
        out = {str(k): shorten(v, limit, depth + 1) for k, v in items[:20]}
        if len(items) > 20:
            out["…"] = f"{len(items)} keys"
        return out
    if isinstance(value, list):
        out_list = [shorten(v, limit, depth + 1) for v in value[:10]]
        if len(value) > 10:
            out_list.append(f"…{len(value)} items")
        return out_list
    if isinstance(value, float) and value != value:
        return "NaN"
    return value


def dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=True).encode()


class Generator:
    """Hostile requests from a fixed seed. ``remember_ids`` feeds ids seen in responses back
    in (the draw that picks one is made regardless, so the stream of choices stays the same
    for a seed)."""

    def __init__(self, seed: int, schema_path: Path = SCHEMA) -> None:
        self.rng = random.Random(seed)
        self.schema: GraphQLSchema = build_schema(schema_path.read_text())
        self.fields: dict[str, tuple[str, str]] = {}
        for root in ("Query", "Mutation", "Subscription"):
            kind = self.schema.get_type(root)
            if isinstance(kind, GraphQLObjectType):
                for name in kind.fields:
                    self.fields[f"{root}.{name}"] = (root, name)
        self.ids: list[str] = ["mem_00000000", "mem_doesnotexist", "task_x", "merge_x"]
        self.seen_ids: set[str] = set(self.ids)
        self.operations = [*self.fields, *(f"mcp.{t}" for t in MCP_TOOLS)] + [
            f"raw.{k}" for k in RAW_KINDS
        ]

    # -- id pool

    def remember_ids(self, data: Any) -> None:
        stack = [data]
        while stack:
            value = stack.pop()
            if isinstance(value, dict):
                for k, v in value.items():
                    if isinstance(v, str) and (k == "id" or k.endswith("Id")) and len(v) < 120:
                        if v not in self.seen_ids and len(self.ids) < 5000:
                            self.seen_ids.add(v)
                            self.ids.append(v)
                    elif isinstance(v, list) and k.endswith("Ids"):
                        stack.extend({"id": x} for x in v if isinstance(x, str))
                    else:
                        stack.append(v)
            elif isinstance(value, list):
                stack.extend(value)

    def pick_id(self) -> str:
        r = self.rng.random()
        return self.ids[int(r * len(self.ids)) % len(self.ids)]

    # -- next request

    def next(self) -> Request:
        r = self.rng.random()
        if r < 0.76:
            op = self.rng.choice(list(self.fields))
            return self.graphql(op)
        if r < 0.88:
            return self.mcp(self.rng.choice(MCP_TOOLS))
        return self.raw(self.rng.choice(RAW_KINDS))

    def for_op(self, op: str) -> Request:
        if op in self.fields:
            return self.graphql(op)
        kind, _, name = op.partition(".")
        return self.mcp(name) if kind == "mcp" else self.raw(name)

    # -- GraphQL

    def graphql(self, op: str) -> Request:
        rng = self.rng
        root, name = self.fields[op]
        root_type = self.schema.get_type(root)
        assert isinstance(root_type, GraphQLObjectType)
        fdef = root_type.fields[name]
        hostility = rng.choice([0.0, 0.0, 0.05, 0.2, 0.5])
        inline = rng.random() < 0.25
        keyword = {"Query": "query", "Mutation": "mutation", "Subscription": "subscription"}[root]
        decls: list[str] = []
        args: list[str] = []
        variables: dict[str, Any] = {}
        notes: list[str] = []
        for i, (arg_name, arg) in enumerate(fdef.args.items()):
            required = isinstance(arg.type, GraphQLNonNull) and arg.default_value is Undefined
            if rng.random() < hostility * 0.3:
                notes.append(f"missing {arg_name}")
                if not inline and rng.random() < 0.5:  # declared, never given
                    decls.append(f"$a{i}: {arg.type}")
                    args.append(f"{arg_name}: $a{i}")
                continue
            if not required and rng.random() < 0.4:
                continue
            value = self.value(arg.type, arg_name, hostility)
            if inline and literal_ok(value):
                args.append(f"{arg_name}: {self.literal(value, arg.type)}")
            else:
                declared = str(arg.type)
                if rng.random() < hostility * 0.1:
                    declared = rng.choice(["String", "Int!", "JSON", "[ID]", "Bogus"])
                    notes.append(f"${arg_name} declared {declared}")
                decls.append(f"$a{i}: {declared}")
                args.append(f"{arg_name}: $a{i}")
                variables[f"a{i}"] = value
        if rng.random() < hostility * 0.3:
            args.append(rng.choice(["bogus: 1", 'extra: "x"', "sessionId: null"]))
            notes.append("extra argument")
        selection = self.selection(fdef.type, 0)
        call = f"{name}({', '.join(args)})" if args else name
        alias = ""
        if rng.random() < 0.2:
            alias = rng.choice(["a1: ", "x: ", "__a: "])
        body = f"{alias}{call}{selection}"
        fragments = ""
        if rng.random() < 0.15:
            fragments = f"\nfragment F on {root} {{ {body} }}"
            body = "...F"
        elif rng.random() < 0.05:
            body = f"{body} again: {call}{selection}"
        header = f"{keyword} Fuzz({', '.join(decls)})" if decls else f"{keyword} Fuzz"
        query = f"{header} {{ {body} }}{fragments}"
        payload: dict[str, Any] = {"query": query, "variables": variables}
        if rng.random() < 0.05:
            payload["operationName"] = rng.choice(["Fuzz", "Other", None])
        return Request(
            op=op,
            body=dumps(payload),
            headers={"Content-Type": "application/json"},
            query=query,
            variables=variables,
            note="; ".join(notes),
            auth="b" if rng.random() < 0.08 else "a",
        )

    def selection(self, gql_type: Any, depth: int) -> str:
        named = get_named_type(gql_type)
        if not isinstance(named, GraphQLObjectType):
            return ""
        leaves = [n for n, f in named.fields.items() if is_leaf(f.type)]
        objects = [n for n, f in named.fields.items() if not is_leaf(f.type)]
        parts = list(leaves)
        if depth < 2 or not leaves:
            for n in objects if depth < 2 else objects[:1]:
                parts.append(n + " " + self.selection(named.fields[n].type, depth + 1))
        return "{ " + " ".join(parts) + " }"

    def value(self, gql_type: Any, arg: str, hostility: float) -> Any:
        rng = self.rng
        if isinstance(gql_type, GraphQLNonNull):
            if rng.random() < hostility * 0.15:
                return None
            return self.value(gql_type.of_type, arg, hostility)
        if rng.random() < hostility * 0.05:
            return None
        if isinstance(gql_type, GraphQLList):
            if rng.random() < hostility * 0.2:
                return rng.choice(
                    [
                        self.value(gql_type.of_type, arg, hostility),  # coerced to a list
                        [None],
                        [[]],
                        {"x": 1},
                    ]
                )
            n = rng.choice([0, 1, 1, 2, 3]) if rng.random() > hostility * 0.1 else 60
            return [self.value(gql_type.of_type, arg, hostility) for _ in range(n)]
        named: GraphQLNamedType = gql_type
        hostile = rng.random() < hostility
        if isinstance(named, GraphQLEnumType):
            valid = list(named.values)
            if hostile:
                return rng.choice(["GOSSIP", valid[0].lower(), "", 1, [valid[0]], "HOT TIER"])
            return rng.choice(valid)
        if isinstance(named, GraphQLInputObjectType):
            if hostile and rng.random() < 0.3:
                return rng.choice(["a string", [1], 5, []])
            out: dict[str, Any] = {}
            for fname, f in named.fields.items():
                required = isinstance(f.type, GraphQLNonNull) and f.default_value is Undefined
                if hostile and rng.random() < 0.15:
                    continue
                if not required and rng.random() < 0.5:
                    continue
                out[fname] = self.value(f.type, fname, hostility)
            if hostile and rng.random() < 0.2:
                out["bogus"] = 1
            return out
        assert isinstance(named, GraphQLScalarType)
        return self.scalar(named.name, arg, hostile)

    def scalar(self, kind: str, arg: str, hostile: bool) -> Any:
        rng = self.rng
        if kind in ("String", "ID"):
            if hostile:
                r = rng.random()
                if r < 0.04:
                    return "x" * rng.choice([20_001, 30_000])
                if r < 0.1 and kind == "ID":
                    return rng.choice([123, 2**63 + 1, -1])
                if r < 0.15:
                    return rng.choice([1.5, True, [], {"a": 1}])
                return rng.choice(HOSTILE_STRINGS)
            if arg in TEXT_ARGS:
                return rng.choice(SENTENCES)
            if kind == "ID" and arg not in ("sessionId", "userId", "agentId"):
                if rng.random() < 0.6 or arg not in BY_NAME:
                    return self.pick_id()
            if arg in BY_NAME:
                return rng.choice(BY_NAME[arg])
            return rng.choice(SENTENCES)
        if kind == "Int":
            if hostile:
                return rng.choice(HOSTILE_INTS)
            if arg == "generation":
                return rng.choice([0, 1, 2])
            if arg in ("hotTokenLimit",):
                return rng.choice([50, 500, 4000])
            if arg in ("maxBytesPerSession",):
                return rng.choice([100, 10_000])
            return rng.randint(1, 10)
        if kind == "Float":
            if hostile:
                return rng.choice(HOSTILE_FLOATS)
            if arg == "olderThanSeconds":
                return rng.choice([60.0, 3600.0, 0.5])
            return rng.choice([0.1, 0.5, 0.9])
        if kind == "Boolean":
            if hostile:
                return rng.choice(HOSTILE_BOOLS)
            return rng.random() < 0.5
        if kind == "DateTime":
            if hostile:
                return rng.choice(HOSTILE_DATES)
            if arg in ("asOf", "validAt"):
                # reads at a moment: the ends of what a DateTime holds, and odd offsets
                return rng.choice(MOMENTS)
            return rng.choice(["2024-05-01T10:00:00+00:00", "2021-01-01T00:00:00Z"])
        if kind == "JSON":
            return hostile_json(rng) if hostile else valid_json(arg, rng)
        return rng.choice(HOSTILE_STRINGS) if hostile else "x"

    def literal(self, value: Any, gql_type: Any) -> str:
        named = get_named_type(gql_type)
        if value is None:
            return "null"
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int | float):
            return json.dumps(value)
        if isinstance(value, str):
            if isinstance(named, GraphQLEnumType) and re.fullmatch(
                r"[_A-Za-z][_0-9A-Za-z]*", value
            ):
                return value
            return json.dumps(value, ensure_ascii=True)
        if isinstance(value, list):
            inner = gql_type.of_type if isinstance(gql_type, GraphQLNonNull) else gql_type
            item = inner.of_type if isinstance(inner, GraphQLList) else inner
            return "[" + ", ".join(self.literal(v, item) for v in value) + "]"
        if isinstance(value, dict):
            fields = named.fields if isinstance(named, GraphQLInputObjectType) else {}
            parts = [
                f"{k}: {self.literal(v, fields[k].type if k in fields else named)}"
                for k, v in value.items()
            ]
            return "{" + ", ".join(parts) + "}"
        return json.dumps(str(value))

    # -- MCP

    def mcp(self, tool: str) -> Request:
        rng = self.rng
        hostility = rng.choice([0.0, 0.1, 0.3, 0.6])
        if tool not in TIER_TOOLS:
            return self._rpc(tool, self.kg_args(tool, hostility), hostility)
        args: dict[str, Any] = {}
        spec = {
            "memory_add": {"sessionId": "id", "content": "text", "type": "type"},
            "memory_recall": {
                "sessionId": "id",
                "query": "text",
                "limit": "num",
                "autoPromote": "bool",
            },
            "memory_spill": {"sessionId": "id", "count": "num"},
            "memory_status": {"sessionId": "id"},
        }[tool]
        required = {"memory_add": 3, "memory_recall": 2, "memory_spill": 1, "memory_status": 1}
        for i, (name, kind) in enumerate(spec.items()):
            optional = i >= required[tool]
            if rng.random() < hostility * 0.2 or (optional and rng.random() < 0.4):
                continue
            hostile = rng.random() < hostility
            if kind == "id":
                args[name] = (
                    rng.choice([*HOSTILE_STRINGS, 5, None, ["s1"]])
                    if hostile
                    else rng.choice(SESSIONS)
                )
            elif kind == "text":
                args[name] = (
                    rng.choice([*HOSTILE_STRINGS, "x" * 30_000, 3, {"a": 1}])
                    if hostile
                    else rng.choice(SENTENCES)
                )
            elif kind == "type":
                args[name] = (
                    rng.choice(["FACT", "gossip", "", 1, None])
                    if hostile
                    else rng.choice(TOOL_TYPES)
                )
            elif kind == "num":
                args[name] = (
                    rng.choice([*HOSTILE_INTS, "NaN", 1e308, -1e308, 101, 10_001])
                    if hostile
                    else rng.randint(1, 5)
                )
            else:
                args[name] = rng.choice(["true", 1, None, "no"]) if hostile else rng.random() < 0.5
        return self._rpc(tool, args, hostility)

    def kg_args(self, tool: str, hostility: float) -> dict[str, Any]:
        """Arguments of a memory-server tool: mostly well-formed over a few shared names,
        with hostile strings, types, sizes and shapes at the given rate."""
        rng = self.rng

        def text(pool: list[str]) -> Any:
            if rng.random() >= hostility:
                return rng.choice(pool)
            return rng.choice([*HOSTILE_STRINGS, "x" * 2_001, "n" * 257, 7, None, ["a"], {"a": 1}])

        def many(make: Callable[[], Any]) -> Any:
            if rng.random() < hostility * 0.3:
                return rng.choice(["not a list", 3, None, {"a": 1}, [make()] * 101])
            return [make() for _ in range(rng.randint(0, 4))]

        observations = [*SENTENCES, "likes tea", "works remotely"]
        kinds = ["person", "organization", "city", "knows", "works_at"]

        def entity() -> Any:
            return {
                "name": text(KG_NAMES),
                "entityType": text(kinds),
                "observations": many(lambda: text(observations)),
            }

        def relation() -> Any:
            return {"from": text(KG_NAMES), "to": text(KG_NAMES), "relationType": text(kinds)}

        def group(key: str) -> Callable[[], Any]:
            return lambda: {"entityName": text(KG_NAMES), key: many(lambda: text(observations))}

        makers: dict[str, Callable[[], dict[str, Any]]] = {
            "create_entities": lambda: {"entities": many(entity)},
            "create_relations": lambda: {"relations": many(relation)},
            "add_observations": lambda: {"observations": many(group("contents"))},
            "delete_entities": lambda: {"entityNames": many(lambda: text(KG_NAMES))},
            "delete_observations": lambda: {"deletions": many(group("observations"))},
            "delete_relations": lambda: {"relations": many(relation)},
            "read_graph": lambda: {
                "cursor": text(KG_NAMES),
                "limit": rng.choice([*HOSTILE_INTS, 1, 5, 1000, 1001, "10"])
                if rng.random() < hostility
                else rng.randint(1, 50),
            },
            "search_nodes": lambda: {"query": text(["ada", "", "TEA", "lond", "x" * 257])},
            "open_nodes": lambda: {"names": many(lambda: text(KG_NAMES))},
        }
        args = makers[tool]()
        if tool == "read_graph" and rng.random() < 0.5:
            del args["cursor"]  # the first page
        for key in list(args):
            if rng.random() < hostility * 0.2:
                del args[key]
        return args

    def _rpc(self, tool: str, args: dict[str, Any], hostility: float) -> Request:
        rng = self.rng
        if rng.random() < hostility * 0.2:
            args["bogus"] = rng.choice([1, "x", {"deep": nested_json(50, rng)}])
        arguments: Any = args
        if rng.random() < hostility * 0.05:
            arguments = rng.choice([[1, 2], "args", None, 5])
        rpc = {
            "jsonrpc": "2.0",
            "id": rng.randint(1, 10**6),
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
        return Request(
            op=f"mcp.{tool}",
            path="/mcp",
            body=dumps(rpc),
            headers=MCP_HEADERS,
            tool=tool,
            arguments=arguments,
            auth="b" if rng.random() < 0.05 else "a",
        )

    # -- raw bodies

    def raw(self, kind: str) -> Request:
        rng = self.rng
        ok_query = '{ hot(sessionId: "s1") { id content } }'
        payload = dumps({"query": ok_query})
        json_headers = {"Content-Type": "application/json"}
        req = Request(op=f"raw.{kind}", headers=json_headers)
        if kind == "malformed_json":
            req.body = rng.choice(
                [b'{"query": ', b"{'query': 1}", b'{"query": "{ hot }",}', b"{]", b'{"a"::1}']
            )
        elif kind == "non_utf8":
            req.body = rng.choice(
                [
                    b"\xff\xfe{",
                    b'{"query": "\xc3\x28"}',
                    b'{"query": "{ hot(sessionId: \\"\xed\xa0\x80\\") { id } }"}',
                ]
            )
        elif kind == "bare_scalar":
            req.body = rng.choice([b"1", b"true", b"null", b'"x"', b"1e400", b"-0"])
        elif kind == "batch_array":
            req.body = dumps([{"query": ok_query}] * rng.choice([0, 1, 2, 50]))
        elif kind == "empty_body":
            req.body = rng.choice([b"", b" ", b"{}"])
        elif kind == "wrong_content_type":
            ctype, body = rng.choice(
                [
                    ("text/plain", payload),
                    ("application/x-www-form-urlencoded", b"query=%7B%20hot%20%7D"),
                    ("application/graphql", ok_query.encode()),
                    ("multipart/form-data; boundary=zz", b"--zz\r\n\r\n--zz--"),
                    ("application/json; charset=latin-1", payload),
                    ("", payload),
                ]
            )
            req.headers = {"Content-Type": ctype} if ctype else {}
            req.body = body
        elif kind == "get_request":
            req.method = "GET"
            req.path = rng.choice(
                [
                    "/graphql?query=%7B%20hot(sessionId%3A%22s1%22)%20%7B%20id%20%7D%20%7D",
                    "/graphql",
                    "/graphql?query=mutation%20%7B%20forget(itemId%3A%22x%22)%20%7D",
                    "/graphql?variables=%7Bbad",
                ]
            )
            req.headers = {}
        elif kind == "bad_auth":
            req.auth = "raw"
            req.headers = json_headers | rng.choice(
                [
                    {},
                    {"Authorization": "Bearer nope"},
                    {"Authorization": "Basic dXNlcjpwYXNz"},
                    {"Authorization": "Bearer"},
                    {"Authorization": "Bearer " + "k" * 10_000},
                    {"Authorization": "bearer\tx y z"},
                ]
            )
            req.body = payload
            if rng.random() < 0.3:
                req.path = "/mcp"
        elif kind == "bad_envelope":
            req.body = dumps(
                rng.choice(
                    [
                        {"query": 123},
                        {"query": None},
                        {"query": ok_query, "variables": "x"},
                        {"query": ok_query, "variables": [1]},
                        {"query": ok_query, "operationName": 5},
                        {"query": ["{ hot }"]},
                        {"variables": {}},
                        {"query": ok_query, "extensions": "x"},
                        {"query": ok_query, "query2": 1},
                    ]
                )
            )
        elif kind == "syntax_error":
            req.body = dumps(
                {
                    "query": rng.choice(
                        [
                            "{",
                            "query {{",
                            "mutation { addMemory }",
                            "{ nope }",
                            '{ hot(sessionId: "\\ud800") { id } }',
                            '{ hot(sessionId: "s1") }',
                            "{ hot(sessionId: 1e400) { id } }",
                            "query ($x: ID!) { hot(sessionId: $y) { id } }",
                            "{ __typename @bogus }",
                            "\x00",
                            "#" * 500,
                        ]
                    )
                }
            )
        elif kind == "multiple_operations":
            q = f"query A {ok_query[1:]} query B {ok_query[1:]}"
            operations: dict[str, Any] = {"query": q}
            if rng.random() < 0.5:
                operations["operationName"] = rng.choice(["A", "C"])
            req.body = dumps(operations)
        elif kind == "depth_bomb":
            n = rng.choice([16, 40, 200])
            q = "{ __schema { types { " + "fields { type { " * n + "name" + " } }" * n + " } } }"
            req.body = dumps({"query": q})
        elif kind == "alias_bomb":
            n = rng.choice([16, 100, 1000])
            q = "{ " + " ".join(f'a{i}: hot(sessionId: "s1") {{ id }}' for i in range(n)) + " }"
            req.body = dumps({"query": q})
        elif kind == "fragment_cycle":
            q = rng.choice(
                [
                    "fragment A on Query { ...B } fragment B on Query { ...A } { ...A }",
                    "fragment A on Query { ...A } { ...A }",
                    "{ ...Missing }",
                    "fragment A on Mutation { __typename } { ...A }",
                ]
            )
            req.body = dumps({"query": q})
        elif kind == "directive_abuse":
            q = rng.choice(
                [
                    '{ hot(sessionId: "s1") @skip(if: "x") { id } }',
                    '{ hot(sessionId: "s1") @include(if: true) @include(if: false) { id } }',
                    '{ hot(sessionId: "s1") @deprecated { id } }',
                    '{ hot(sessionId: "s1") { id @skip(if: true) } }',
                    '{ hot(sessionId: "s1") { id @include } }',
                ]
            )
            req.body = dumps({"query": q})
        elif kind == "huge_query":
            n = rng.choice([3000, 20_000])
            q = "{ " + " ".join(f'a{i}: hot(sessionId: "s1") {{ id }}' for i in range(n)) + " }"
            req.body = dumps(
                {"query": q if rng.random() < 0.5 else "{ __typename }" + " " * 200_000}
            )
        elif kind == "oversized_body":
            req.body = (
                b'{"query": "{ __typename }", "variables": {"x": "' + b"x" * 1_100_000 + b'"}}'
            )
        elif kind == "deep_variables":
            depth = rng.choice([64, 100, 1000, 5000])
            inner = "[" * depth + "]" * depth
            req.body = (
                b'{"query": "mutation($m: JSON) { addMemory(input: {sessionId: \\"s1\\", '
                b'content: \\"deep\\", metadata: $m}) { id } }", "variables": {"m": {"x": '
                + inner.encode()
                + b"}}}"
            )
        elif kind == "json_extremes":
            q = 'query($n: Int!) { conversation(sessionId: "s1", last: $n) { role } }'
            req.body = rng.choice(
                [
                    b'{"query": "'
                    + q.replace('"', '\\"').encode()
                    + b'", "variables": {"n": 1e400}}',
                    b'{"query": "'
                    + q.replace('"', '\\"').encode()
                    + b'", "variables": {"n": NaN}}',
                    b'{"query": "'
                    + q.replace('"', '\\"').encode()
                    + b'", "variables": {"n": '
                    + b"9" * 5000
                    + b"}}",
                    b'{"query": "{ __typename }", "query": "{ hot }"}',
                    b'{"query": "{ __typename }", "variables": {"n": -Infinity}}',
                ]
            )
        elif kind == "introspection":
            req.body = dumps(
                {
                    "query": rng.choice(
                        [
                            "{ __schema { queryType { name } } }",
                            '{ __type(name: "MemoryItem") { fields { name } } }',
                            "{ __typename }",
                        ]
                    )
                }
            )
        elif kind == "wrong_method":
            req.method = rng.choice(["PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"])
            req.path = rng.choice(["/graphql", "/mcp", "/healthz"])
            req.body = payload
        elif kind == "mcp_raw":
            req.path = "/mcp"
            req.headers = dict(MCP_HEADERS)
            choice = rng.randrange(9)
            if choice == 0:
                req.body = b"{not json"
            elif choice == 1:
                req.body = dumps({"jsonrpc": "2.0", "id": 1, "method": "bogus/method"})
            elif choice == 2:
                req.body = dumps({"id": 1, "method": "tools/list"})
            elif choice == 3:
                req.body = dumps([{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}] * 3)
            elif choice == 4:
                req.body = dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "tools/call",
                        "params": {"name": "memory_nope", "arguments": {}},
                    }
                )
            elif choice == 5:
                req.headers = {"Content-Type": "application/json"}
                req.body = dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            elif choice == 6:  # not the SSE stream (that one stays open by design)
                req.method = "GET"
                req.headers = {"Accept": "application/json"}
                req.body = b""
            elif choice == 7:
                req.body = b"\xff\xfe"
            else:
                req.body = dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        return req


MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def is_leaf(gql_type: Any) -> bool:
    return isinstance(get_named_type(gql_type), GraphQLScalarType | GraphQLEnumType)


def literal_ok(value: Any) -> bool:
    """Values a GraphQL literal can carry as generated (object keys must be names)."""
    if isinstance(value, dict):
        return all(
            isinstance(k, str) and re.fullmatch(r"[_A-Za-z][_0-9A-Za-z]*", k) and literal_ok(v)
            for k, v in value.items()
        )
    if isinstance(value, list):
        return len(value) < 100 and all(literal_ok(v) for v in value)
    if isinstance(value, float):
        return value == value and abs(value) != float("inf")
    return True


# ---------------------------------------------------------------------------- oracle


def leak_patterns() -> list[tuple[str, re.Pattern[str]]]:
    names = cypher_names()
    folders = sorted({n.split("/")[0] for n in names})
    stems = sorted({n.split("/")[1] for n in names} | {"fulltext", "vector"})
    schema = build_schema(SCHEMA.read_text())
    operations = sorted(
        n for root in ("Query", "Mutation") for n in getattr(schema.get_type(root), "fields", {})
    )
    return [
        ("traceback", re.compile(r"Traceback")),
        ("file path", re.compile(r'File "|\.py\b')),
        ("driver text", re.compile(r"neo4j\.|redis\.|Neo\.ClientError|Neo\.TransientError")),
        ("pydantic", re.compile(r"pydantic|errors\.pydantic\.dev", re.I)),
        ("cypher", re.compile(r"cypher|graph query", re.I)),
        ("query file", re.compile(r"\b(?:" + "|".join(folders) + r")/\w+")),
        (
            "failed query",
            re.compile(
                r"\b(?:" + "|".join(map(re.escape, stems + operations)) + r")\b[^.]{0,40}\bfailed"
                r"|\bfailed\b[^.]{0,40}\b(?:" + "|".join(map(re.escape, stems)) + r")\b",
                re.I,
            ),
        ),
        ("python repr", re.compile(r"<(?:class|function|coroutine|object) |object at 0x")),
    ]


LEAKS = leak_patterns()


def leaks(message: str, sent: Any = None) -> list[str]:
    """The leak patterns ``message`` matches once the strings the request itself sent
    (``sent``: its variables or tool arguments) are taken out: an error that quotes the
    client's own input back ("found: {'status': 'failed-ish', ...}") leaks nothing."""
    for text in sorted(_strings(sent), key=len, reverse=True):
        if len(text) >= 3:
            message = message.replace(text, " ")
    return [name for name, pattern in LEAKS if pattern.search(message)]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


@dataclass
class Outcome:
    status: int
    codes: list[str]
    problems: list[str]
    body: str
    data: Any = None


def judge(req: Request, status: int, raw: bytes) -> Outcome:
    """Apply the oracle to one response."""
    problems: list[str] = []
    codes: list[str] = []
    text = raw.decode("utf-8", "replace")
    if status >= 500:
        problems.append(f"status {status}")
    try:
        body = json.loads(text) if text.strip() else None
    except ValueError:
        body = None
        for name in leaks(text):
            problems.append(f"leak ({name}) in a non-JSON body")
    data = None

    def check_errors(errors: Any, where: str) -> None:
        if not isinstance(errors, list) or not errors:
            problems.append(f"{where}: errors is not a non-empty list")
            return
        for err in errors:
            if not isinstance(err, dict):
                problems.append(f"{where}: an error is not an object")
                continue
            extensions = err.get("extensions")
            ext = extensions if isinstance(extensions, dict) else {}
            code = ext.get("code")
            codes.append(str(code))
            if code not in CODES:
                problems.append(f"{where}: error without a known code: {shorten(err, 200)}")
            elif code == "INTERNAL":
                problems.append(f"{where}: INTERNAL")
            message = str(err.get("message", ""))
            echoed = message + " " + json.dumps(ext, ensure_ascii=False, default=str)
            for name in leaks(echoed, req.variables or req.arguments):
                problems.append(f"{where}: leak ({name})")

    if isinstance(body, dict) and "errors" in body:
        check_errors(body["errors"], "graphql")
    if isinstance(body, dict) and "data" in body:
        data = body["data"]
    if req.path == "/mcp" and isinstance(body, dict | list):
        for msg in body if isinstance(body, list) else [body]:
            if not isinstance(msg, dict):
                continue
            if isinstance(msg.get("error"), dict):  # JSON-RPC protocol error
                codes.append(f"rpc {msg['error'].get('code')}")
                for name in leaks(str(msg["error"].get("message", "")), req.arguments):
                    problems.append(f"mcp rpc error: leak ({name})")
            result = msg.get("result")
            if isinstance(result, dict) and "content" in result:
                data = result.get("structuredContent")
                if result.get("isError"):
                    texts = [c.get("text", "") for c in result["content"] if isinstance(c, dict)]
                    try:
                        err = json.loads(texts[0])["error"]
                        check_errors([{"message": err.get("message"), "extensions": err}], "mcp")
                    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
                        codes.append("none")
                        problems.append(f"mcp: tool error without a code: {shorten(texts, 200)}")
                        for name in leaks(" ".join(map(str, texts)), req.arguments):
                            problems.append(f"mcp: leak ({name})")
    return Outcome(status, codes, problems, text, data)


# ---------------------------------------------------------------------------- runner


#: no answer may take longer (the server documents no wait that long for these requests:
#: a tenant's turn waits at most 1 s)
SLOW_SECONDS = 2.0


@dataclass
class Summary:
    total: int = 0
    seconds: float = 0.0
    per_op: Counter[str] = field(default_factory=Counter)
    per_op_seconds: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    per_status: Counter[str] = field(default_factory=Counter)
    per_code: Counter[str] = field(default_factory=Counter)
    per_op_code: dict[str, Counter[str]] = field(default_factory=dict)
    failures: list[dict[str, Any]] = field(default_factory=list)
    failure_count: int = 0
    causes: Counter[str] = field(default_factory=Counter)
    transport_errors: int = 0
    #: requests answered after more than SLOW_SECONDS, by operation, with a few examples
    slow: Counter[str] = field(default_factory=Counter)
    slow_examples: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "requests": self.total,
            "seconds": round(self.seconds, 1),
            "requests_per_s": round(self.total / self.seconds, 1) if self.seconds else None,
            "failures": self.failure_count,
            "transport_errors": self.transport_errors,
            "causes": dict(self.causes.most_common()),
            "per_status": dict(sorted(self.per_status.items())),
            "per_code": dict(self.per_code.most_common()),
            "per_operation": {
                op: {
                    "requests": n,
                    "mean_ms": round(1000 * self.per_op_seconds[op] / n, 1),
                    "codes": dict(self.per_op_code.get(op, Counter())),
                }
                for op, n in sorted(self.per_op.items())
            },
            "reproducers": self.failures,
            "slow_seconds": SLOW_SECONDS,
            "slow": dict(self.slow.most_common()),
            "slow_examples": self.slow_examples,
        }


def cause_of(req: Request, problem: str) -> str:
    return f"{req.op}: {re.sub(r':.*', '', problem) if 'without' in problem else problem}"


async def send(
    client: httpx.AsyncClient, base: str, keys: dict[str, str], req: Request
) -> tuple[int, bytes]:
    headers = dict(req.headers)
    if req.auth in keys:
        headers["Authorization"] = f"Bearer {keys[req.auth]}"
    response = await client.request(
        req.method,
        base + req.path,
        content=req.body if req.method not in ("GET", "HEAD") else None,
        headers=headers,
    )
    return response.status_code, response.content


async def run(
    client: httpx.AsyncClient,
    base: str,
    keys: dict[str, str],
    gen: Generator,
    count: int,
    *,
    seconds: float | None = None,
    concurrency: int = 1,
    keep: int = 50,
    answer_within: float = 20.0,
    first: Iterable[str] = (),
    progress: Callable[[int, Summary], None] | None = None,
) -> Summary:
    """Send ``count`` requests (``first`` names operations to cover before the random
    stream: one request each), stopping early after ``seconds``."""
    summary = Summary()
    started = time.perf_counter()
    queue = list(first)
    lock = asyncio.Lock()

    async def worker() -> None:
        while True:
            async with lock:
                if summary.total >= count:
                    return
                if seconds is not None and time.perf_counter() - started > seconds:
                    return
                req = gen.for_op(queue.pop(0)) if queue else gen.next()
                summary.total += 1
            sent = time.perf_counter()
            try:
                try:
                    status, raw = await asyncio.wait_for(
                        send(client, base, keys, req), answer_within
                    )
                except httpx.TransportError:  # a kept-alive connection the server closed
                    status, raw = await asyncio.wait_for(
                        send(client, base, keys, req), answer_within
                    )
            except TimeoutError:
                summary.transport_errors += 1
                status, raw = 599, f"no answer within {answer_within:.0f} s".encode()
            except httpx.TransportError as exc:
                summary.transport_errors += 1
                status, raw = 599, f"transport error: {type(exc).__name__}: {exc}".encode()
            except Exception as exc:  # the in-process app raised: a real server answers 500
                status = 500
                raw = f"app raised {type(exc).__name__}: {str(exc)[:300]}".encode()
            took = time.perf_counter() - sent
            summary.per_op_seconds[req.op] += took
            if took > SLOW_SECONDS:
                summary.slow[req.op] += 1
                if len(summary.slow_examples) < 20:
                    summary.slow_examples.append(
                        {"request": req.reproducer(), "seconds": round(took, 2), "status": status}
                    )
            outcome = judge(req, status, raw)
            if outcome.data is not None:
                gen.remember_ids(outcome.data)
            summary.per_op[req.op] += 1
            summary.per_status[str(status)] += 1
            op_codes = summary.per_op_code.setdefault(req.op, Counter())
            for code in outcome.codes or (["ok"] if status < 400 else [f"http {status}"]):
                summary.per_code[code] += 1
                op_codes[code] += 1
            if outcome.problems:
                summary.failure_count += 1
                new_causes = [cause_of(req, p) for p in outcome.problems]
                fresh = any(summary.causes[c] == 0 for c in new_causes)
                summary.causes.update(new_causes)
                if fresh or len(summary.failures) < keep // 2:
                    if len(summary.failures) < keep:
                        summary.failures.append(
                            {
                                "request": req.reproducer(),
                                "problems": outcome.problems,
                                "status": status,
                                "response": outcome.body[:1500],
                            }
                        )
            if progress is not None:
                progress(summary.total, summary)

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    summary.seconds = time.perf_counter() - started
    return summary


def format_failures(summary: Summary, n: int = 5) -> str:
    lines = [
        f"{summary.failure_count} of {summary.total} responses broke the oracle",
        "causes: " + json.dumps(dict(summary.causes.most_common(20)), indent=1),
    ]
    for f in summary.failures[:n]:
        lines.append(json.dumps(f, indent=1, ensure_ascii=True)[:3000])
    return "\n".join(lines)
