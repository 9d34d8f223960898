"""Noisy neighbours: does one tenant's hostile traffic slow another tenant?

Starts a real ``graphmem serve`` (the API and its enrichment worker, 127.0.0.1 only) with
two tenants, B and C, each with its own key, on a Redis database of the run's own
(``--redis-db``, default 14, emptied before and after).

Tenant C first fills each of its sessions past its hot budget (``C_PREFILL`` memories,
enriched before anything is measured), then runs a steady paced mix: open-loop clients
(each request is due on a schedule, whatever the ones before it are doing; at most four
in flight per operation) sending about 2 ``addMemory``, 2 ``search``, 1 ``recall`` and 2
``hot`` a second, each latency counted from when its request was due. C behaves like a
normal client: a refusal (``RATE_LIMITED``) is retried after its ``retryAfterMs``, and
counted as a failure. Every memory C adds is then searched for by meaning (its own text,
``retriever: VECTOR``) until a search returns it: the delay from its acknowledgement is
its "searchable after".

After a baseline with C alone, tenant B sends each attack in turn, from a process of its
own (its client does not share C's event loop), for ``--attack-seconds`` each (at most
60) with a quiet gap between them. Every attack is 64 keep-alive loopback connections in
closed loops that never wait on ``retryAfterMs`` (B is hostile), bounded in time and in
count (``--max-requests``):

- ``schema_recursion``: registers a record schema whose ``$defs`` recurse through
  ``anyOf``, then records nested 15-30 deep against it; when that registration is
  refused, against the schemas it can register (recursion through one route, an open
  object), with ``uniqueItems`` over 4,000 objects and 4,500 (past ``maxItems``), and
  the recursive registration again;
- ``tokenizer``: memories of ``"(" * 8000``, ``"(" * 20000``, ``"😀" * 20000``,
  ``"'s" * 10000`` and one of 450 distinct person names (co-occurrence), which the
  enrichment worker must tokenize and tag;
- ``fragment_search``: ``{ ... on Query { search(...) { score } } }``;
- ``aliased_search``: one request carrying 15 aliased searches;
- ``invalid``: ``{ nosuchfield }``; ``typename``: ``{ __typename }``;
- ``plain_search``: plain searches;
- ``bad_offset``: ``addMemory`` with ``occurredAt`` ``2024-01-01T00:00:00+23:59`` (must be
  refused; the session's hot items are counted before and after).

For each attack: C's p50/p99 per operation against its baseline (ratios, same run), C's
refusals and errors, C's "searchable after" (p50/max), B's answers by HTTP status and
GraphQL ``extensions.code`` and its requests/s, every 5xx or INTERNAL from anyone, and
the API process's RSS (sampled every second). After the attacks, ``--settle-seconds``
(60) with C still paced, then the API's RSS against its baseline. Each acceptance point
gets a verdict; a miss is reported, never raised.

    .venv/bin/python -m bench.neighbours [--attack-seconds 45] [--redis-db 14]
        [--only ATTACK ...] [--set GRAPHMEM_NAME=VALUE ...] [--quick] [--out FILE]

Output: ``bench/results/neighbours.json``, ``bench/results/neighbours.png`` and the
``neighbours`` section of BENCHMARKS.md. With ``--out`` the JSON (and the plot beside it)
go there and BENCHMARKS.md is left alone; ``--quick`` (a few seconds per attack, the
smoke test) never touches BENCHMARKS.md (without ``--out`` it writes to the temporary
directory).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Coroutine
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import psutil

from bench.lib.loadgen import TRANSPORT_ERRORS, LoopbackClient, retry_after_ms
from bench.lib.report import RESULTS, ROOT, publish, run_info
from bench.lib.server import Server, paced
from bench.lib.stats import percentile

#: in the order they run: the enrichment attack last, so the worker's backlog it leaves
#: (CPU on the same two cores) does not weigh on the attacks after it; the settle period
#: that follows shows its aftermath
ATTACKS = (
    "schema_recursion",
    "fragment_search",
    "aliased_search",
    "invalid",
    "typename",
    "plain_search",
    "bad_offset",
    "tokenizer",
)
#: attacks that load the enrichment worker: C's new memories must stay findable by meaning
ENRICHMENT_ATTACKS = ("tokenizer",)
CONNECTIONS = 64
MAX_ATTACK_SECONDS = 60.0
REQUEST_TIMEOUT = 30.0
DEFAULT_REDIS_DB = 14
#: the acceptance: C within this factor of its baseline (p50 and p99), C's new memory
#: found by meaning within FINDABLE_SECONDS, the API's RSS back within RSS_MB of its
#: baseline once the attacks are over
RATIO = 2.0
FINDABLE_SECONDS = 2.0
RSS_MB = 50.0

#: C's mix, requests a second per operation (open loop), and what each may have in flight
C_RATES = {"add": 2.0, "search": 2.0, "recall": 1.0, "hot": 2.0}
C_OPS = tuple(C_RATES)
C_IN_FLIGHT = 4
C_RETRIES = 3
C_SESSIONS = 4
C_USER = "c-user"
#: memories added to each of C's sessions before anything is measured: more than a
#: session's hot budget (4,000 tokens, about 200 of C's memories) holds, so its hot tiers
#: are full and spilling from the baseline on. Started empty, they filled during the
#: run, and `hot` (which returns them) doubled its latency with nobody attacking: the
#: baseline must see the state the attacks see.
C_PREFILL = 250
PREFILL_BATCH = 50
#: C's memories being searched for at once (past that an add is counted as unprobed)
#: the probes' searches go one at a time (C has two slots of its own while B is active:
#: a stalled worker must not turn C's probes into a load on C itself)
PROBES_IN_FLIGHT = 8
PROBE_GIVE_UP = 15.0
#: ratios are judged only on operations with at least this many requests in both windows
MIN_SAMPLES = 5

FIRST = (
    "Olivia Marcus Priya Tomasz Amara Kenji Lucia Dmitri Fatima Henrik Ingrid Jamal "
    "Keiko Leon Mei Nadia Oscar Paloma Quentin Rosa Sven Talia Umar Vera Wendell Ximena "
    "Yusuf Zara Bruno Camille"
).split()
LAST = (
    "Hartley Okafor Lindqvist Moreau Nakamura Petrov Quiroga Rossi Sandoval Tanaka "
    "Ueda Valdez Whitaker Xu Yilmaz Zielinski Abernathy Brennan Castellanos Dubois "
    "Eriksen Fontaine Gallagher Haddad Ivanova Jovanovic Kowalski Laurent Mbeki Novak"
).split()
TOPICS = (
    "budget meeting travel dinner project deadline launch coffee book music running "
    "garden family painting guitar hiking camping birthday recipe museum"
).split()
PLACES = "library harbour bakery station office park market studio cafe gym rooftop lake".split()

ADD = "mutation($i: AddMemoryInput!) { addMemory(input: $i) { id } }"
HOT = "query($s: ID!) { hot(sessionId: $s) { id } }"
SEARCH = "query($q: String!, $u: ID!) { search(query: $q, userId: $u, limit: 5) { score } }"
RECALL = (
    "mutation($s: ID!, $q: String!) { recall(input: {sessionId: $s, query: $q, limit: 3})"
    " { items { id } } }"
)
FIND = (
    "query($q: String!, $u: ID!) { search(query: $q, userId: $u, limit: 10,"
    " retriever: VECTOR) { item { id } } }"
)
REGISTER = "mutation($n: String!, $s: JSON!) { registerRecordSchema(name: $n, schema: $s) }"
ADD_RECORD = "mutation($n: String!, $d: JSON!) { addRecord(schema: $n, data: $d) { id } }"
ENRICHMENT = "{ enrichment { waiting parked } }"
ADD_MANY = "mutation($i: [AddMemoryInput!]!) { addMemories(inputs: $i) { id } }"


def codes_in(body: Any) -> list[str]:
    """The ``extensions.code`` of each error of a GraphQL answer (none: it succeeded)."""
    if not isinstance(body, dict):
        return ["NOT_JSON"]
    return [
        str((e.get("extensions") or {}).get("code", "NO_CODE")) if isinstance(e, dict) else "?"
        for e in body.get("errors") or []
    ]


def pct(values: list[float], q: float) -> float | None:
    return round(percentile(values, q), 1) if values else None


def c_sentence(rng: random.Random) -> str:
    """A memory of C's own: a sentence no other memory repeats word for word."""
    return (
        f"{rng.choice(FIRST)} talked about the {rng.choice(TOPICS)} and the "
        f"{rng.choice(TOPICS)} at the {rng.choice(PLACES)} (note {uuid.uuid4().hex[:6]})"
    )


# ---------------------------------------------------------------------------- tenant C


class TenantC:
    """C's paced open-loop mix, the "searchable after" probes, and everything C saw."""

    def __init__(self, url: str, key: str) -> None:
        self.client = httpx.AsyncClient(
            base_url=url, timeout=REQUEST_TIMEOUT, limits=httpx.Limits(max_connections=32)
        )
        self.headers = {"Authorization": f"Bearer {key}"}
        self.rng = random.Random()
        #: (wall time the request was due, operation, ms until its final answer)
        self.samples: list[tuple[float, str, float]] = []
        #: (wall time, operation, code): refusals, errors, failed connections
        self.problems: list[tuple[float, str, str]] = []
        #: (wall time the add was acknowledged, seconds until found by meaning or None)
        self.findable: list[tuple[float, float | None]] = []
        self.unprobed: list[float] = []
        self._probes = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._slots = {op: asyncio.Semaphore(C_IN_FLIGHT) for op in C_OPS}
        self._slots["find"] = asyncio.Semaphore(1)

    async def close(self) -> None:
        await self.client.aclose()

    async def post(self, op: str, query: str, variables: dict[str, Any]) -> dict[str, Any] | None:
        """One operation, as a normal client sends it: a refusal is retried after the
        ``retryAfterMs`` it names (up to C_RETRIES times). Every refusal and error is
        recorded; the answer's data, or None."""
        for attempt in range(C_RETRIES + 1):
            try:
                response = await self.client.post(
                    "/graphql",
                    json={"query": query, "variables": variables},
                    headers=self.headers,
                )
            except httpx.HTTPError as exc:
                self.problems.append((time.time(), op, type(exc).__name__))
                return None
            try:
                body = response.json()
            except ValueError:
                body = None
            codes = codes_in(body)
            if response.status_code == 429 or "RATE_LIMITED" in codes:
                self.problems.append((time.time(), op, "RATE_LIMITED"))
                if attempt < C_RETRIES:
                    await asyncio.sleep(retry_after_ms(body) / 1000)
                    continue
                return None
            if response.status_code != 200:
                self.problems.append((time.time(), op, f"HTTP {response.status_code}"))
            for code in codes:
                self.problems.append((time.time(), op, code))
            data = body.get("data") if isinstance(body, dict) else None
            return data if isinstance(data, dict) else None
        return None

    async def timed(self, op: str, query: str, variables: dict[str, Any]) -> dict[str, Any] | None:
        due, started = time.time(), time.perf_counter()
        async with self._slots[op]:
            data = await self.post(op, query, variables)
        self.samples.append((due, op, 1000 * (time.perf_counter() - started)))
        return data

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def drain(self, seconds: float = PROBE_GIVE_UP + REQUEST_TIMEOUT) -> None:
        if self._tasks:
            _, pending = await asyncio.wait(set(self._tasks), timeout=seconds)
            for task in pending:
                task.cancel()

    # -- the operations

    async def add(self, probe: bool = True) -> None:
        content = c_sentence(self.rng)
        session = f"c-s{self.rng.randrange(C_SESSIONS)}"
        data = await self.timed(
            "add", ADD, {"i": {"sessionId": session, "userId": C_USER, "content": content}}
        )
        item_id = ((data or {}).get("addMemory") or {}).get("id")
        if not item_id or not probe:
            return
        acked = time.time()
        if self._probes >= PROBES_IN_FLIGHT:
            self.unprobed.append(acked)
            return
        self._probes += 1
        try:
            found = await self.searchable_after(str(item_id), content)
        finally:
            self._probes -= 1
        self.findable.append((acked, found))

    async def searchable_after(self, item_id: str, content: str) -> float | None:
        """Seconds from now until a search by meaning (its own text, VECTOR) returns
        ``item_id``: polled every 0.25 s for 3 s, then every 2 s (the probes' searches
        one at a time); None past PROBE_GIVE_UP."""
        started = time.perf_counter()
        await asyncio.sleep(0.1)
        while (elapsed := time.perf_counter() - started) < PROBE_GIVE_UP:
            data = await self.timed("find", FIND, {"q": content, "u": C_USER})
            hits = (data or {}).get("search") or []
            if any((hit.get("item") or {}).get("id") == item_id for hit in hits):
                return time.perf_counter() - started
            await asyncio.sleep(0.25 if elapsed < 3 else 2.0)
        return None

    def words(self) -> str:
        return " ".join(self.rng.choices(TOPICS, k=3))

    def mix(self, stop: asyncio.Event) -> list[Coroutine[Any, Any, None]]:
        """One paced scheduler per operation; each request runs in a task of its own."""

        async def add() -> None:
            self.spawn(self.add())

        async def search() -> None:
            self.spawn(self._op("search", SEARCH, {"q": self.words(), "u": C_USER}))

        async def recall() -> None:
            session = f"c-s{self.rng.randrange(C_SESSIONS)}"
            self.spawn(self._op("recall", RECALL, {"s": session, "q": self.words()}))

        async def hot() -> None:
            self.spawn(self._op("hot", HOT, {"s": f"c-s{self.rng.randrange(C_SESSIONS)}"}))

        steps = {"add": add, "search": search, "recall": recall, "hot": hot}
        return [paced(stop, 1 / C_RATES[op], steps[op]) for op in C_OPS]

    async def _op(self, op: str, query: str, variables: dict[str, Any]) -> None:
        await self.timed(op, query, variables)

    async def prefill(self, per_session: int, seconds: float = 300.0) -> int:
        """Fill C's sessions (``per_session`` memories each, in batches) and wait until the
        worker has enriched them all; returns how many were added."""
        added = 0
        for n in range(C_SESSIONS):
            left = per_session
            while left > 0:
                batch = [
                    {"sessionId": f"c-s{n}", "userId": C_USER, "content": c_sentence(self.rng)}
                    for _ in range(min(PREFILL_BATCH, left))
                ]
                data = await self.post("prefill", ADD_MANY, {"i": batch})
                if not data or not data.get("addMemories"):
                    raise RuntimeError(f"C's prefill was refused: {self.problems[-3:]}")
                added += len(data["addMemories"])
                left -= len(batch)
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            data = await self.post("prefill", ENRICHMENT, {})
            if ((data or {}).get("enrichment") or {}).get("waiting") == 0:
                return added
            await asyncio.sleep(1)
        raise RuntimeError("the enrichment worker did not finish C's prefill")

    async def wait_enrichment_ready(self, seconds: float = 180.0) -> float:
        """The worker loads its models after the API is ready: until a first memory is
        found by meaning, nothing is measured. Returns the seconds it took."""
        started = time.perf_counter()
        while time.perf_counter() - started < seconds:
            content = c_sentence(self.rng)
            data = await self.post(
                "ready", ADD, {"i": {"sessionId": "c-ready", "userId": C_USER, "content": content}}
            )
            item_id = ((data or {}).get("addMemory") or {}).get("id")
            if item_id and await self.searchable_after(str(item_id), content) is not None:
                self.samples = [s for s in self.samples if s[1] != "find"]
                return time.perf_counter() - started
            await asyncio.sleep(1)
        raise RuntimeError("the enrichment worker made no memory findable by meaning")


# ---------------------------------------------------------------------------- tenant B

RECURSIVE: dict[str, Any] = {
    "$defs": {
        "n": {
            "anyOf": [
                {"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}, "required": ["zz"]},
                {"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}},
            ]
        }
    },
    "properties": {"a": {"$ref": "#/$defs/n"}},
}
#: the schemas B tries to register, in order of preference for deep records
SCHEMAS: dict[str, dict[str, Any]] = {
    "recursive_anyof": RECURSIVE,
    "recursive_one_route": {
        "$defs": {"n": {"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}}},
        "properties": {"a": {"$ref": "#/$defs/n"}},
    },
    "unique_unbounded": {
        "type": "object",
        "properties": {"xs": {"type": "array", "uniqueItems": True}},
    },
    "unique_4000": {
        "type": "object",
        "properties": {"xs": {"type": "array", "uniqueItems": True, "maxItems": 4000}},
    },
    "open": {"type": "object"},
}


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def person_names(n: int = 450) -> str:
    """``n`` distinct capitalised person-like names, comma separated (about 6 KB)."""
    rng = random.Random(29)
    pairs = [f"{first} {last}" for first in FIRST for last in LAST]
    rng.shuffle(pairs)
    return "Met today: " + ", ".join(pairs[:n]) + "."


def encode(query: str, variables: dict[str, Any] | None = None) -> bytes:
    return json.dumps({"query": query, "variables": variables or {}}, ensure_ascii=False).encode()


def attack_bodies(name: str, registered: dict[str, bool]) -> list[bytes]:
    """B's requests in an attack, encoded once; connections take them in turn."""
    if name == "schema_recursion":
        deep_target = next(
            (s for s in ("recursive_anyof", "recursive_one_route", "open") if registered.get(s)),
            "recursive_anyof",
        )
        unique_target = next(
            (s for s in ("unique_4000", "unique_unbounded", "open") if registered.get(s)),
            "unique_4000",
        )
        objects = [{"k": n} for n in range(4000)]
        over = [{"k": n} for n in range(4500)]
        bodies = [encode(ADD_RECORD, {"n": deep_target, "d": nested(d)}) for d in range(15, 31)]
        bodies += [
            encode(ADD_RECORD, {"n": unique_target, "d": {"xs": objects}}),
            encode(ADD_RECORD, {"n": unique_target, "d": {"xs": list(range(4000))}}),
            encode(ADD_RECORD, {"n": unique_target, "d": {"xs": over}}),
            encode(REGISTER, {"n": "recursive_anyof", "s": RECURSIVE}),
        ]
        if registered.get("unique_unbounded"):
            bodies.append(encode(ADD_RECORD, {"n": "unique_unbounded", "d": {"xs": over}}))
        return bodies
    if name == "tokenizer":
        contents = ["(" * 8000, "(" * 20000, "\U0001f600" * 20000, "'s" * 10000, person_names()]
        return [
            encode(ADD, {"i": {"sessionId": f"b-s{n % 8}", "content": contents[n % 5]}})
            for n in range(40)
        ]
    search = 'search(query: "budget money plans", limit: 10) { score }'
    fixed = {
        "fragment_search": "{ ... on Query { " + search + " } }",
        "aliased_search": "{ " + " ".join(f"s{k}: {search}" for k in range(15)) + " }",
        "invalid": "{ nosuchfield }",
        "typename": "{ __typename }",
        "plain_search": "{ " + search + " }",
    }
    if name in fixed:
        return [encode(fixed[name])]
    if name == "bad_offset":
        return [
            encode(
                ADD,
                {
                    "i": {
                        "sessionId": "b-offset",
                        "content": f"bad offset {n}",
                        "occurredAt": "2024-01-01T00:00:00+23:59",
                    }
                },
            )
            for n in range(64)
        ]
    raise ValueError(name)


async def _close(client: LoopbackClient | None) -> None:
    if client is not None:
        try:
            await client.__aexit__()
        except (OSError, RuntimeError):
            pass


async def attack(
    url: str, key: str, name: str, seconds: float, max_requests: int
) -> dict[str, Any]:
    """B's side, in a process of its own: CONNECTIONS closed loops for ``seconds`` (or
    ``max_requests`` in all), never waiting on a refusal."""
    parts = urlsplit(url)
    if parts.hostname != "127.0.0.1" or parts.port is None:
        raise ValueError(f"attacks target 127.0.0.1 only, not {url}")
    host, port = parts.hostname, parts.port
    headers = {"Authorization": f"Bearer {key}"}
    started, cpu = time.time(), time.process_time()
    extra: dict[str, Any] = {}
    registered: dict[str, bool] = {}
    async with httpx.AsyncClient(base_url=url, timeout=REQUEST_TIMEOUT) as http:

        async def check(query: str, variables: dict[str, Any] | None = None) -> Any:
            """A measurement (not the attack): asked again after 1 s when refused."""
            for _ in range(20):
                try:
                    response = await http.post(
                        "/graphql",
                        json={"query": query, "variables": variables or {}},
                        headers=headers,
                    )
                    body = response.json()
                except (httpx.HTTPError, ValueError) as exc:
                    return {"error": type(exc).__name__}
                if response.status_code != 429:
                    return body
                await asyncio.sleep(1)
            return {"error": "refused 20 times"}

        if name == "schema_recursion":
            answers = {}
            for label, schema in SCHEMAS.items():
                body = await check(REGISTER, {"n": label, "s": schema})
                refused = codes_in(body)
                registered[label] = not refused and bool(body.get("data"))
                answers[label] = (
                    "registered" if registered[label] else ",".join(refused) or str(body)[:200]
                )
            extra["registrations"] = answers
        if name == "bad_offset":
            extra["hot_before"] = len(
                ((await check(HOT, {"s": "b-offset"})).get("data") or {}).get("hot") or []
            )
        bodies = attack_bodies(name, registered)
        outcomes: Counter[str] = Counter()  # "status codes" of each answer
        codes: Counter[str] = Counter()  # each error's code
        deadline = time.monotonic() + seconds
        sent = 0

        async def loop() -> None:
            nonlocal sent
            client: LoopbackClient | None = None
            try:
                while time.monotonic() < deadline and sent < max_requests:
                    body = bodies[sent % len(bodies)]
                    sent += 1
                    try:
                        if client is None:
                            client = LoopbackClient(host, port, "/graphql", headers)
                            await client.__aenter__()
                        status, raw = await asyncio.wait_for(
                            client.post_bytes(body), REQUEST_TIMEOUT
                        )
                    except TRANSPORT_ERRORS as exc:
                        outcomes[type(exc).__name__] += 1
                        await _close(client)
                        client = None
                        await asyncio.sleep(0.01)
                        continue
                    try:
                        found = codes_in(json.loads(raw))
                    except ValueError:
                        found = ["NOT_JSON"]
                    codes.update(found)
                    outcomes[f"{status} {','.join(sorted(set(found))) or 'ok'}"] += 1
            finally:
                await _close(client)

        pool_started = time.monotonic()
        await asyncio.gather(*(loop() for _ in range(CONNECTIONS)))
        took = time.monotonic() - pool_started
        ended = time.time()
        if name == "bad_offset":
            extra["hot_after"] = len(
                ((await check(HOT, {"s": "b-offset"})).get("data") or {}).get("hot") or []
            )
        if name in ENRICHMENT_ATTACKS:
            extra["enrichment_after"] = ((await check(ENRICHMENT)).get("data") or {}).get(
                "enrichment"
            )
    statuses: Counter[str] = Counter()
    for outcome, n in outcomes.items():
        statuses[outcome.split(" ", 1)[0]] += n
    total = sum(outcomes.values())
    return {
        "started": started,
        "ended": ended,
        "requests": total,
        "requests_per_s": round(total / took, 1) if took else None,
        "outcomes": dict(outcomes.most_common()),
        "statuses": dict(statuses.most_common()),
        "codes": dict(codes.most_common()),
        "client_cpu_s": round(time.process_time() - cpu, 1),
        **extra,
    }


# ---------------------------------------------------------------------------- the run


@dataclass(frozen=True)
class Options:
    warmup: float
    baseline: float
    attack: float
    gap: float
    settle: float
    attacks: tuple[str, ...]
    max_requests: int
    #: memories C adds to each of its sessions before the baseline (see ``prefill``)
    prefill: int = C_PREFILL


@dataclass
class Window:
    name: str
    start: float
    end: float
    b: dict[str, Any] = field(default_factory=dict)


RESOURCES = (
    "api_rss_mb",
    "workers_rss_mb",
    "api_cpu_percent",
    "workers_cpu_percent",
    "machine_cpu_percent",
)


class Sampler:
    """Each second: the API process's RSS and CPU, the enrichment workers' (its
    children), and the machine's CPU (100% = one core)."""

    def __init__(self, pid: int) -> None:
        self.api = psutil.Process(pid)
        self.workers = self.api.children(recursive=True)
        self.samples: list[dict[str, float]] = []
        psutil.cpu_percent(None)
        for proc in (self.api, *self.workers):
            proc.cpu_percent(None)

    def sample(self) -> None:
        rss = cpu = 0.0
        for proc in self.workers:
            try:
                rss += proc.memory_info().rss
                cpu += proc.cpu_percent(None)
            except psutil.Error:
                pass
        self.samples.append(
            {
                "t": time.time(),
                "api_rss_mb": round(self.api.memory_info().rss / 2**20, 1),
                "workers_rss_mb": round(rss / 2**20, 1),
                "api_cpu_percent": round(self.api.cpu_percent(None), 1),
                "workers_cpu_percent": round(cpu, 1),
                "machine_cpu_percent": round(
                    psutil.cpu_percent(None) * (psutil.cpu_count() or 1), 1
                ),
            }
        )

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                self.sample()
            except psutil.Error:
                return
            try:
                await asyncio.wait_for(stop.wait(), 1.0)
            except TimeoutError:
                pass

    def values(self, key: str, start: float, end: float) -> list[float]:
        return [s[key] for s in self.samples if start <= s["t"] <= end]


async def run_attack_process(
    url: str, key: str, name: str, options: Options, running: list[asyncio.subprocess.Process]
) -> dict[str, Any]:
    spawned = time.time()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bench.neighbours",
        "--attack",
        name,
        "--url",
        url,
        "--key",
        key,
        "--attack-seconds",
        str(options.attack),
        "--max-requests",
        str(options.max_requests),
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
    )
    running.append(proc)
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), options.attack + 120)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return {"error": "the attack process did not end", "started": spawned}
    finally:
        running.remove(proc)
    try:
        result: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        result = {"error": f"the attack process exited {proc.returncode}", "started": spawned}
    return result


async def neighbours(
    server: Server, keys: dict[str, str], options: Options, running: list[Any]
) -> dict[str, Any]:
    c = TenantC(server.url, keys["c"])
    assert server.proc is not None
    sampler = Sampler(server.proc.pid)
    try:
        ready_s = await c.wait_enrichment_ready()
        prefilled = await c.prefill(options.prefill)
        c.samples.clear()
        stop = asyncio.Event()
        background: list[asyncio.Task[None]] = [
            asyncio.create_task(w) for w in (*c.mix(stop), sampler.run(stop))
        ]
        t0 = time.time()
        await asyncio.sleep(options.warmup)
        base = Window("baseline", time.time(), 0.0)
        await asyncio.sleep(options.baseline)
        base.end = time.time()
        windows: list[Window] = []
        for name in options.attacks:
            await asyncio.sleep(options.gap)
            b = await run_attack_process(server.url, keys["b"], name, options, running)
            window = Window(name, b.get("started", time.time()), b.get("ended", time.time()), b)
            windows.append(window)
            print(f"{name}: {json.dumps(attack_line(c, window, base))}", file=sys.stderr)
        attacks_end = time.time()
        await asyncio.sleep(options.settle)
        settled = time.time()
        stop.set()
        await asyncio.gather(*background)
        await c.drain()
        backlog = {name: await enrichment_of(c.client, keys[name]) for name in ("b", "c")}
    finally:
        await c.close()
    return judge(c, sampler, base, windows, attacks_end, settled, t0, options) | {
        "c_prefilled": prefilled,
        "enrichment_ready_s": round(ready_s, 1),
        "enrichment_at_end": backlog,
    }


async def enrichment_of(client: httpx.AsyncClient, key: str) -> dict[str, Any] | None:
    """A tenant's memories still waiting for the enrichment worker (and parked)."""
    try:
        response = await client.post(
            "/graphql", json={"query": ENRICHMENT}, headers={"Authorization": f"Bearer {key}"}
        )
        data = response.json().get("data") or {}
    except (httpx.HTTPError, ValueError):
        return None
    status: dict[str, Any] | None = data.get("enrichment")
    return status


# ---------------------------------------------------------------------------- judging


def c_rows(c: TenantC, start: float, end: float) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for op in (*C_OPS, "find"):
        values = [ms for t, o, ms in c.samples if o == op and start <= t <= end]
        rows[op] = {
            "n": len(values),
            "p50": pct(values, 0.5),
            "p99": pct(values, 0.99),
            "max": round(max(values), 1) if values else None,
        }
    return rows


def ratios(rows: dict[str, dict[str, Any]], base: dict[str, dict[str, Any]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for op in C_OPS:
        row, ref = rows[op], base[op]
        if row["n"] < MIN_SAMPLES or ref["n"] < MIN_SAMPLES:
            continue
        for q in ("p50", "p99"):
            if row[q] is not None and ref[q]:
                out[f"{op}_{q}"] = round(row[q] / ref[q], 2)
    return out


def findable_in(c: TenantC, start: float, end: float) -> dict[str, Any]:
    delays = [f for t, f in c.findable if start <= t <= end]
    found = [f for f in delays if f is not None]
    unprobed = sum(1 for t in c.unprobed if start <= t <= end)
    missed = len(delays) - len(found)
    # over every probe, one not found counting as longer than any found: None when the
    # median (or the max) is a memory not found within PROBE_GIVE_UP
    ordered = sorted(found) + [float("inf")] * missed
    p50 = statistics.median(ordered) if ordered else None
    return {
        "probes": len(delays),
        "found": len(found),
        "not_found": missed,
        "give_up_s": PROBE_GIVE_UP,
        "unprobed": unprobed,
        "p50_s": round(p50, 2) if p50 is not None and p50 != float("inf") else None,
        "max_s": round(max(found), 2) if found and not missed else None,
        "found_max_s": round(max(found), 2) if found else None,
        "within_2s": bool(delays)
        and not missed
        and not unprobed
        and max(found) <= FINDABLE_SECONDS,
    }


def problems_in(c: TenantC, start: float, end: float) -> dict[str, int]:
    return dict(Counter(f"{op}: {code}" for t, op, code in c.problems if start <= t <= end))


def attack_line(c: TenantC, w: Window, base: Window) -> dict[str, Any]:
    """What the progress line shows after each attack."""
    r = ratios(c_rows(c, w.start, w.end), c_rows(c, base.start, base.end))
    return {
        "worst_ratio": max(r.values()) if r else None,
        "c_problems": problems_in(c, w.start, w.end),
        "b_req_s": w.b.get("requests_per_s"),
        "b": w.b.get("outcomes") or w.b.get("error"),
    }


def server_errors(outcomes: dict[str, int]) -> int:
    """5xx answers and INTERNAL errors among answers counted as ``"status codes"``."""
    bad = 0
    for outcome, n in outcomes.items():
        status, _, codes = outcome.partition(" ")
        if (status.isdigit() and int(status) >= 500) or "INTERNAL" in codes.split(","):
            bad += n
    return bad


def c_server_errors(problems: dict[str, int]) -> int:
    return sum(n for k, n in problems.items() if k.endswith(": INTERNAL") or ": HTTP 5" in k)


def judge(
    c: TenantC,
    sampler: Sampler,
    base: Window,
    windows: list[Window],
    attacks_end: float,
    settled: float,
    t0: float,
    options: Options,
) -> dict[str, Any]:
    base_rows = c_rows(c, base.start, base.end)
    rss_base = sampler.values("api_rss_mb", base.start, base.end)
    cpu_base = sampler.values("machine_cpu_percent", base.start, base.end)
    attacks: dict[str, Any] = {}
    for w in windows:
        rows = c_rows(c, w.start, w.end)
        r = ratios(rows, base_rows)
        problems = problems_in(c, w.start, w.end)
        rss = sampler.values("api_rss_mb", w.start, w.end)
        cpu = sampler.values("machine_cpu_percent", w.start, w.end)
        entry: dict[str, Any] = {
            "seconds": round(w.end - w.start, 1),
            "ran": "error" not in w.b and w.b.get("requests", 0) > 0,
            "b": w.b,
            "b_5xx_or_internal": server_errors(w.b.get("outcomes", {})),
            "c": rows,
            "ratios": r,
            "worst_ratio": max(r.values()) if r else None,
            "within_2x": bool(r) and all(v <= RATIO for v in r.values()),
            "c_problems": problems,
            "c_refused": sum(n for k, n in problems.items() if k.endswith("RATE_LIMITED")),
            "c_5xx_or_internal": c_server_errors(problems),
            "findable": findable_in(c, w.start, w.end),
            "api_rss_median_mb": round(statistics.median(rss), 1) if rss else None,
            "api_rss_peak_mb": max(rss) if rss else None,
            "machine_cpu_percent_median": round(statistics.median(cpu)) if cpu else None,
            "api_cpu_percent_median": _median(sampler.values("api_cpu_percent", w.start, w.end)),
            "workers_cpu_percent_median": _median(
                sampler.values("workers_cpu_percent", w.start, w.end)
            ),
        }
        if w.name == "bad_offset":
            before, after = w.b.get("hot_before"), w.b.get("hot_after")
            accepted = sum(n for k, n in w.b.get("outcomes", {}).items() if k.endswith(" ok"))
            entry["refused_every_add"] = accepted == 0
            entry["hot_grew"] = None if before is None or after is None else after > before
        attacks[w.name] = entry
    settle_rss = sampler.values("api_rss_mb", settled - 5, settled)
    rss_after = round(statistics.median(settle_rss), 1) if settle_rss else None
    rss_baseline = round(statistics.median(rss_base), 1) if rss_base else None
    at_end = sampler.values("api_rss_mb", attacks_end - 2, attacks_end)
    all_problems = problems_in(c, base.start, settled)
    refused = sum(n for k, n in all_problems.items() if k.endswith("RATE_LIMITED"))
    five_xx = c_server_errors(problems_in(c, 0, float("inf"))) + sum(
        a["b_5xx_or_internal"] for a in attacks.values()
    )
    enrichment = [a for n, a in attacks.items() if n in ENRICHMENT_ATTACKS]
    verdicts: dict[str, bool | None] = {
        "every_attack_ran": all(a["ran"] for a in attacks.values())
        and len(attacks) == len(options.attacks),
        "c_within_2x_every_attack": all(a["within_2x"] for a in attacks.values()),
        "c_searchable_within_2s": (
            all(a["findable"]["within_2s"] for a in enrichment) if enrichment else None
        ),
        "no_5xx_or_internal": five_xx == 0,
        "c_never_refused": refused == 0,
        "c_no_errors": not any(not k.endswith("RATE_LIMITED") for k in all_problems),
        "rss_back_within_50mb": (
            None
            if rss_after is None or rss_baseline is None
            else rss_after - rss_baseline <= RSS_MB
        ),
    }
    if "bad_offset" in attacks:
        a = attacks["bad_offset"]
        verdicts["bad_offset_refused_and_hot_flat"] = a["refused_every_add"] and not a["hot_grew"]
    missed = [k for k, v in verdicts.items() if v is False]
    return {
        "options": asdict(options),
        "connections_per_attack": CONNECTIONS,
        "c_rates_per_s": C_RATES,
        "baseline": {
            "seconds": round(base.end - base.start, 1),
            "c": base_rows,
            "c_problems": problems_in(c, base.start, base.end),
            "findable": findable_in(c, base.start, base.end),
            "api_rss_median_mb": rss_baseline,
            "machine_cpu_percent_median": round(statistics.median(cpu_base)) if cpu_base else None,
        },
        "attacks": attacks,
        "settle": {
            "seconds": round(settled - attacks_end, 1),
            "c": c_rows(c, attacks_end, settled),
            "c_problems": problems_in(c, attacks_end, settled),
        },
        "rss": {
            "baseline_mb": rss_baseline,
            "peak_mb": max(sampler.values("api_rss_mb", base.start, attacks_end), default=None),
            "at_attacks_end_mb": at_end[-1] if at_end else None,
            "after_settle_mb": rss_after,
            "growth_after_settle_mb": (
                None
                if rss_after is None or rss_baseline is None
                else round(rss_after - rss_baseline, 1)
            ),
            "workers_baseline_mb": _median(sampler.values("workers_rss_mb", base.start, base.end)),
            "workers_after_settle_mb": _median(
                sampler.values("workers_rss_mb", settled - 5, settled)
            ),
        },
        "c_problems_total": all_problems,
        "five_xx_or_internal": five_xx,
        "verdicts": verdicts,
        "verdict": "every acceptance point met" if not missed else "missed: " + ", ".join(missed),
        "series": {
            "t0": t0,
            "windows": [["baseline", base.start - t0, base.end - t0]]
            + [[w.name, round(w.start - t0, 2), round(w.end - t0, 2)] for w in windows]
            + [["settle", round(attacks_end - t0, 2), round(settled - t0, 2)]],
            "c": [[round(t - t0, 2), op, round(ms, 1)] for t, op, ms in c.samples if t >= t0],
            "findable": [
                [round(t - t0, 2), None if f is None else round(f, 2)]
                for t, f in c.findable
                if t >= t0
            ],
            "resources_columns": ["t_s", *RESOURCES],
            "resources": [
                [round(s["t"] - t0, 1), *(s[k] for k in RESOURCES)] for s in sampler.samples
            ],
        },
    }


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


# ---------------------------------------------------------------------------- report


def plot(results: dict[str, Any], path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    series = results["series"]
    fig, (lat, found, rss) = plt.subplots(
        3, 1, figsize=(12, 9), sharex=True, height_ratios=[3, 1.2, 1.5]
    )
    for n, op in enumerate(C_OPS):
        points = [(t, ms) for t, o, ms in series["c"] if o == op]
        if points:
            xs, ys = zip(*points, strict=True)
            lat.scatter(xs, ys, s=3, label=f"C {op}", color=f"C{n}", alpha=0.6)
    for ax in (lat, found, rss):
        for name, start, end in series["windows"]:
            if name in ("baseline", "settle"):
                ax.axvspan(start, end, color="green" if name == "baseline" else "blue", alpha=0.05)
            else:
                ax.axvspan(start, end, color="red", alpha=0.12)
    for name, start, _ in series["windows"]:
        lat.text(start, 1.02, name, fontsize=7, rotation=30, transform=lat.get_xaxis_transform())
    lat.set(yscale="log", ylabel="C latency, ms (log)")
    lat.legend(loc="upper right", fontsize=7, markerscale=3)
    fig.suptitle("tenant C's paced mix while tenant B attacks (red)")
    hits = [(t, f) for t, f in series["findable"] if f is not None]
    found.scatter([t for t, _ in hits], [f for _, f in hits], s=4, color="C4")
    missed = [t for t, f in series["findable"] if f is None]
    if missed:
        found.scatter(
            missed, [PROBE_GIVE_UP] * len(missed), s=12, color="C3", marker="x", label="not found"
        )
        found.legend(fontsize=7)
    found.axhline(FINDABLE_SECONDS, color="grey", lw=0.8, ls="--")
    found.set(ylabel="C's add found\nby meaning after, s")
    res = series["resources"]
    rss.plot([r[0] for r in res], [r[1] for r in res], color="C0", label="API RSS")
    base = results["rss"]["baseline_mb"]
    if base is not None:
        rss.axhspan(base, base + RSS_MB, color="grey", alpha=0.1, label=f"baseline + {RSS_MB:g} MB")
    rss.set(ylabel="API RSS, MB", xlabel="seconds")
    cpu = rss.twinx()
    columns = series["resources_columns"]
    for column, colour, label in (
        ("machine_cpu_percent", "C7", "machine CPU %"),
        ("workers_cpu_percent", "C2", "enrichment worker CPU %"),
    ):
        k = columns.index(column)
        cpu.plot([r[0] for r in res], [r[k] for r in res], color=colour, lw=0.6, label=label)
    cpu.set_ylabel("machine CPU %")
    handles = rss.get_legend_handles_labels()[0] + cpu.get_legend_handles_labels()[0]
    rss.legend(handles, [h.get_label() for h in handles], fontsize=7, loc="upper left")
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def _ms(v: Any) -> str:
    return "-" if v is None else f"{v:g}"


def _ratio_pair(a: dict[str, Any], op: str) -> str:
    r = a["ratios"]
    p50, p99 = r.get(f"{op}_p50"), r.get(f"{op}_p99")
    text = f"{_ms(p50)} / {_ms(p99)}"
    return f"**{text}**" if any(v is not None and v > RATIO for v in (p50, p99)) else text


def _answers(b: dict[str, Any], top: int = 4) -> str:
    if "error" in b:
        return f"error: {b['error']}"
    return ", ".join(f"{k} {n:,}" for k, n in list(b.get("outcomes", {}).items())[:top])


def _found(f: dict[str, Any]) -> str:
    if not f["probes"]:
        return "-"
    over = f"> {f['give_up_s']:g}"
    p50 = over if f["p50_s"] is None else f"{f['p50_s']:g}"
    top = over if f["max_s"] is None else f"{f['max_s']:g}"
    text = f"{p50} / {top}"
    if f["not_found"] or f["unprobed"]:
        text += (
            f" ({f['not_found']} of {f['probes']} not found in {f['give_up_s']:g} s; "
            f"{f['unprobed']} more adds not probed, {PROBES_IN_FLIGHT} probes pending)"
        )
    return text


def _yes(ok: bool | None) -> str:
    return "n/a" if ok is None else ("met" if ok else "**missed**")


def report(r: dict[str, Any]) -> str:
    run, o, base, rss, v = r["run"], r["options"], r["baseline"], r["rss"], r["verdicts"]
    rows = []
    for name, a in r["attacks"].items():
        rows.append(
            f"| {name} | {_ms(a['b'].get('requests_per_s'))} | {_answers(a['b'])} | "
            + " | ".join(_ratio_pair(a, op) for op in C_OPS)
            + f" | {_found(a['findable'])} | {a['b_5xx_or_internal'] + a['c_5xx_or_internal']} | "
            f"{a['c_refused']} | {_ms(a['api_rss_peak_mb'])} | "
            f"{_ms(a['machine_cpu_percent_median'])} |"
        )
    base_cells = " | ".join(
        f"{_ms(base['c'][op]['p50'])} / {_ms(base['c'][op]['p99'])}" for op in C_OPS
    )
    schema = r["attacks"].get("schema_recursion", {}).get("b", {}).get("registrations")
    offset = r["attacks"].get("bad_offset")
    notes = []
    if schema:
        notes.append(
            "- schema registrations: " + ", ".join(f"`{k}` {val}" for k, val in schema.items())
        )
    if offset:
        notes.append(
            f"- bad_offset: every add refused: {_yes(offset['refused_every_add'])}; the "
            f"session's hot items {offset['b'].get('hot_before')} before, "
            f"{offset['b'].get('hot_after')} after"
        )
    for name in ENRICHMENT_ATTACKS:
        if name in r["attacks"]:
            b = r["attacks"][name]["b"]
            notes.append(
                f"- {name}: B's memories waiting for the enrichment worker as the attack "
                f"ended: {(b.get('enrichment_after') or {}).get('waiting', '-')}; "
                f"{o['settle']:g} s later: "
                f"{(r['enrichment_at_end'].get('b') or {}).get('waiting', '-')} "
                f"(C's: {(r['enrichment_at_end'].get('c') or {}).get('waiting', '-')})"
            )
    logged = r.get("server_log_problems") or []
    notes.append(
        f"- server log: {len(logged)} lines reporting an error or a traceback"
        + (f" (first: `{logged[0][:120]}`)" if logged else "")
    )
    rates = ", ".join(f"{n:g} {op}" for op, n in C_RATES.items())
    sets = "".join(f" --set {k}={v}" for k, v in (r.get("settings") or {}).items())
    return f"""## Neighbours: one tenant's attacks against another tenant's latency

`bench/neighbours.py --redis-db {r["redis_db"]}{sets}`: one `graphmem serve` (API and one \
enrichment worker) on loopback with tenants B and C. C first fills each of its \
{C_SESSIONS} sessions with {r.get("c_prefilled", 0) // C_SESSIONS} memories (past their hot \
budget, so its hot tiers are full from the baseline on), then runs a paced open-loop mix the \
whole run
({rates} a second; latency from when each request was due; a refusal retried after its
`retryAfterMs`) and searches for each memory it adds by meaning (`retriever: VECTOR`) until
found. After a {base["seconds"]:g} s baseline, B sends each attack (in the order below) for {
        o["attack"]:g} s from \
{r["connections_per_attack"]}
connections in a process of its own, never waiting on `retryAfterMs`, {o["gap"]:g} s apart. \
{run["date"]}, commit {run["commit"]}, {run["machine"]}; the machine is shared (median machine \
CPU in the baseline {_ms(base["machine_cpu_percent_median"])}%, 200% = both cores busy), so
figures are noisy: the ratios are against C's baseline in the same run.

C alone (baseline), p50 / p99 ms: {
        " · ".join(f"{op} {cell}" for op, cell in zip(C_OPS, base_cells.split(" | "), strict=True))
    }; \
found by meaning after {_found(base["findable"])} s (p50 / max).

| attack | B req/s | B's answers (status codes) | C add p50 / p99 x | C search x | C recall x \
| C hot x | C's add found by meaning after, p50 / max s | 5xx + INTERNAL | C refused \
| API RSS peak MB | machine CPU % |
|---|---|---|---|---|---|---|---|---|---|---|---|
{chr(10).join(rows)}

{chr(10).join(notes)}

| acceptance point | verdict |
|---|---|
| C's p50 and p99 within {RATIO:g}x of its baseline in every attack \
| {_yes(v["c_within_2x_every_attack"])} |
| C's new memory searchable by meaning within {FINDABLE_SECONDS:g} s during \
{", ".join(ENRICHMENT_ATTACKS)} | {_yes(v["c_searchable_within_2s"])} |
| no 5xx, no INTERNAL from anyone | {_yes(v["no_5xx_or_internal"])} ({r["five_xx_or_internal"]}) |
| C never refused | {_yes(v["c_never_refused"])} |
| API RSS within {RSS_MB:g} MB of its baseline {o["settle"]:g} s after the attacks \
| {_yes(v["rss_back_within_50mb"])} (baseline {_ms(rss["baseline_mb"])} MB, peak \
{_ms(rss["peak_mb"])}, after {_ms(rss["after_settle_mb"])}) |

**{r["verdict"]}.**

![C's latency, write-to-read delay, API RSS](bench/results/neighbours.png)
"""


# ---------------------------------------------------------------------------- main


def changed_files() -> list[str]:
    """Files the working tree changes against HEAD (what the figure ran on)."""
    try:
        out = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return []
    return [line[3:] for line in out.splitlines() if line.strip()]


def empty_redis(url: str) -> None:
    import redis

    client = redis.Redis.from_url(url)
    try:
        client.flushdb()
    finally:
        client.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--attack-seconds", type=float, default=45.0, help="per attack, ≤ 60")
    parser.add_argument("--baseline-seconds", type=float, default=30.0)
    parser.add_argument("--gap-seconds", type=float, default=10.0)
    parser.add_argument("--settle-seconds", type=float, default=60.0)
    parser.add_argument("--max-requests", type=int, default=200_000, help="per attack")
    parser.add_argument("--only", nargs="+", choices=ATTACKS, help="run only these attacks")
    parser.add_argument("--quick", action="store_true", help="a few seconds each (CI smoke)")
    parser.add_argument("--out", type=Path, help="write JSON here (and the plot beside it)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="GRAPHMEM_NAME=VALUE",
        help="a setting for the server (tuning runs; recorded in the results)",
    )
    parser.add_argument(
        "--redis-db",
        type=int,
        default=DEFAULT_REDIS_DB,
        help="the Redis database of REDIS_URL the run uses, emptied before and after "
        f"(default {DEFAULT_REDIS_DB}): B's backlog must not outlive the run",
    )
    parser.add_argument("--attack", choices=ATTACKS, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--key", help=argparse.SUPPRESS)
    args = parser.parse_args()
    seconds = min(MAX_ATTACK_SECONDS, args.attack_seconds)
    if args.attack:  # B's side, started by the run
        result = asyncio.run(attack(args.url, args.key, args.attack, seconds, args.max_requests))
        print(json.dumps(result))
        return 0
    attacks = tuple(args.only) if args.only else ATTACKS
    if args.quick:
        options = Options(1.0, 3.0, 2.5, 0.5, 2.0, attacks, args.max_requests, prefill=10)
    else:
        options = Options(
            5.0,
            args.baseline_seconds,
            seconds,
            args.gap_seconds,
            args.settle_seconds,
            attacks,
            args.max_requests,
        )
    out = args.out
    if out is None and args.quick:
        out = Path(tempfile.gettempdir()) / "neighbours-quick.json"
    run_id = uuid.uuid4().hex[:8]
    tenants = {"b": f"nb-{run_id}-b", "c": f"nb-{run_id}-c"}
    keys = {name: f"nb-{name}-{uuid.uuid4().hex}" for name in tenants}
    log = Path(tempfile.mkdtemp(prefix="graphmem-neighbours-")) / "server.log"
    settings = dict(pair.split("=", 1) for pair in args.set)
    if any(not name.startswith("GRAPHMEM_") for name in settings):
        parser.error("--set takes GRAPHMEM_NAME=VALUE")
    server = Server(
        {keys[n]: t for n, t in tenants.items()}, log, redis_db=args.redis_db, env=settings
    )
    print(f"server log: {log}", file=sys.stderr)

    def terminate(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, terminate)
    running: list[asyncio.subprocess.Process] = []
    results: dict[str, Any] = {
        "run": run_info() | {"changed_files": changed_files()},
        "quick": args.quick,
        "redis_db": args.redis_db,
        "settings": settings,
        "tenants": tenants,
    }
    assert server.redis_url is not None
    empty_redis(server.redis_url)
    try:
        server.start()
        results |= asyncio.run(neighbours(server, keys, options, running))
    except KeyboardInterrupt:
        print("interrupted: stopping the server", file=sys.stderr)
        return 130
    finally:
        for proc in running:
            if proc.returncode is None:
                proc.kill()
        workers = (
            psutil.Process(server.proc.pid).children(recursive=True)
            if server.proc is not None and server.proc.poll() is None
            else []
        )
        code = server.stop()
        # the enrichment workers end after the API (they may be in a long job): the
        # database is emptied once they are gone, not under them
        _, alive = psutil.wait_procs(workers, timeout=30)
        for proc in alive:
            proc.kill()
        empty_redis(server.redis_url)
    results["server_exit_code"] = code
    results["server_log_problems"] = server.log_problems()[:20]
    section = report(results)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
    publish("neighbours", results, section, out)
    png = out.with_suffix(".png") if out else RESULTS / "neighbours.png"
    if plot(results, png):
        print(f"plot: {png}", file=sys.stderr)
    print(json.dumps({"verdict": results["verdict"], **results["verdicts"]}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
