"""Noisy neighbours: does one tenant's hostile traffic slow another tenant?

Starts a real ``graphmem serve`` (API and enrichment worker, 127.0.0.1 only) with two
tenants. Tenant C runs a steady paced mix the whole time (adds, hot reads, searches,
recalls: about 20 operations a second, nothing flat out). After a baseline with C alone,
tenant B sends each attack in turn, from a process of its own (so B's client does not
share C's event loop), for ``--attack-seconds`` each, with a quiet gap between them:

- ``schema_recursion``: a record schema whose ``$defs`` recurse through ``anyOf``, then
  records nested 15-30 deep against it (and ``uniqueItems`` over 4,000 items);
- ``tokenizer``: memories that make spaCy's tokenizer quadratic (``"(" * 8000`` ...,
  ``"😀" * 20000``, ``"'s" * 10000``) and one of 450 distinct names (co-occurrence);
- ``fragment_search``, ``aliased_search``: searches wrapped in an inline fragment, and
  15 (then 8) aliased searches in one request;
- ``invalid``, ``typename``: ``{ nosuchfield }`` and ``{ __typename }`` flat out;
- ``plain_search``: plain searches flat out;
- ``bad_offset``: adds with ``occurredAt`` at a zone offset Neo4j cannot hold.

Every attack is 64 connections in a closed loop that ignore ``retryAfterMs`` (B is
hostile) and stop by themselves. During each: C's p50 and p99 per operation against its
baseline (ratios, same run), B's answers by status and code, every 5xx or INTERNAL from
anyone, the API's RSS each second; during the enrichment attacks, how long until C's new
memory is found by meaning (``retriever: VECTOR``). After the attacks, 60 s quiet, then the
API's RSS against its baseline.

    .venv/bin/python -m bench.neighbours [--attack-seconds 45] [--redis-db 13] [--quick]
        [--only ATTACK ...] [--out FILE]

Output: ``bench/results/neighbours.json``, ``bench/results/neighbours.png`` and the
``neighbours`` section of BENCHMARKS.md; with ``--out`` the JSON (and plot) go there and
BENCHMARKS.md is left alone; ``--quick`` (a few seconds per attack, the smoke test) never
touches BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

from bench.report import RESULTS, run_info, save_json, update_section
from bench.soak import Server

ATTACKS = (
    "schema_recursion",
    "tokenizer",
    "fragment_search",
    "aliased_search",
    "invalid",
    "typename",
    "plain_search",
    "bad_offset",
)
ENRICHMENT_ATTACKS = ("tokenizer",)
CONNECTIONS = 64
#: the acceptance: C within this factor of its baseline, found by meaning within 2 s,
#: the API's RSS back within 50 MB 60 s after the attacks
RATIO = 2.0
FINDABLE_SECONDS = 2.0
RSS_MB = 50.0
WORDS = (
    "budget meeting travel paris dinner project deadline launch coffee book music running "
    "garden family friend painting guitar hiking camping birthday recipe museum"
).split()

ADD = "mutation($i: AddMemoryInput!) { addMemory(input: $i) { id } }"
HOT = "query($s: ID!) { hot(sessionId: $s) { id } }"
SEARCH = 'query($q: String!) { search(query: $q, userId: "c-user", limit: 5) { score } }'
RECALL = (
    "mutation($s: ID!, $q: String!) { recall(input: {sessionId: $s, query: $q, limit: 3})"
    " { items { id } } }"
)
FIND = (
    'query($q: String!) { search(query: $q, userId: "c-user", limit: 5, retriever: VECTOR)'
    " { item { content } } }"
)


def codes_of(response: httpx.Response) -> list[str]:
    try:
        body = response.json()
    except ValueError:
        return [f"http {response.status_code}"]
    errors = body.get("errors") if isinstance(body, dict) else None
    if not errors:
        return ["ok"] if response.status_code < 400 else [f"http {response.status_code}"]
    return [str((e.get("extensions") or {}).get("code")) for e in errors]


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)


# ---------------------------------------------------------------------------- tenant C


@dataclass
class Tenant:
    """C's steady mix: each operation paced by its own coroutine; latencies counted
    from when a request was due, so a request held up behind a slow one counts it."""

    client: httpx.AsyncClient
    key: str
    samples: list[tuple[float, str, float]] = field(default_factory=list)  # t, op, ms
    problems: Counter[str] = field(default_factory=Counter)
    findable: list[tuple[float, float | None]] = field(default_factory=list)  # t, s

    async def call(self, query: str, variables: dict[str, Any]) -> httpx.Response:
        return await self.client.post(
            "/graphql",
            json={"query": query, "variables": variables},
            headers={"Authorization": f"Bearer {self.key}"},
        )

    async def paced(
        self, op: str, per_second: float, stop: asyncio.Event, make: Callable[[], Any]
    ) -> None:
        due = time.perf_counter() + random.random() / per_second
        while not stop.is_set():
            wait = due - time.perf_counter()
            if wait > 0:
                await asyncio.sleep(wait)
            query, variables = make()
            try:
                response = await self.call(query, variables)
                codes = codes_of(response)
            except httpx.HTTPError as exc:
                codes = [type(exc).__name__]
            self.samples.append((time.time(), op, 1000 * (time.perf_counter() - due)))
            for code in codes:
                if code != "ok":
                    self.problems[f"{op}: {code}"] += 1
            due = max(due + 1 / per_second, time.perf_counter() - 1)

    def mix(self, stop: asyncio.Event) -> list[Awaitable[None]]:
        def add() -> tuple[str, dict[str, Any]]:
            text = " ".join(random.choices(WORDS, k=10))
            session = f"c-s{random.randrange(4)}"
            return ADD, {"i": {"sessionId": session, "userId": "c-user", "content": text}}

        def words() -> str:
            return " ".join(random.choices(WORDS, k=3))

        return [
            self.paced("add", 4, stop, add),
            self.paced("hot", 8, stop, lambda: (HOT, {"s": f"c-s{random.randrange(4)}"})),
            self.paced("search", 4, stop, lambda: (SEARCH, {"q": words()})),
            self.paced("recall", 2, stop, lambda: (RECALL, {"s": "c-s0", "q": words()})),
        ]

    async def wait_enrichment_ready(self, seconds: float = 120.0) -> None:
        """The worker loads its models after the API is ready: wait for a first memory
        to be found by meaning before measuring anything."""
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            stop = asyncio.Event()
            stop.set()
            await self.probe_findable(stop)
            if self.findable.pop()[1] is not None:
                return
        raise RuntimeError("the enrichment worker made no memory findable")

    async def probe_findable(self, stop: asyncio.Event, every: float = 3.0) -> None:
        """Add a memory with a sentence of its own, then search by meaning until it
        is found (up to 10 s): the write-to-read delay through the enrichment worker."""
        while True:
            token = uuid.uuid4().hex[:6]
            animal = random.choice(["penguin", "giraffe", "octopus", "hedgehog", "falcon"])
            content = f"My neighbour {token} adopted a {animal} that sings opera at dawn"
            sent = time.perf_counter()
            added = time.time()
            try:
                await self.call(
                    ADD, {"i": {"sessionId": "c-probe", "userId": "c-user", "content": content}}
                )
                found: float | None = None
                while time.perf_counter() - sent < 10:
                    response = await self.call(FIND, {"q": content})
                    items = (response.json().get("data") or {}).get("search") or []
                    if any(token in (i["item"]["content"] or "") for i in items):
                        found = time.perf_counter() - sent
                        break
                    await asyncio.sleep(0.1)
            except httpx.HTTPError:
                found = None
            self.findable.append((added, found))
            if stop.is_set():
                return
            try:
                await asyncio.wait_for(stop.wait(), every)
            except TimeoutError:
                pass


# ---------------------------------------------------------------------------- tenant B

RECURSIVE = {
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
REGISTER = "mutation($n: String!, $s: JSON!) { registerRecordSchema(name: $n, schema: $s) }"
UNIQUE = {"type": "object", "properties": {"xs": {"type": "array", "uniqueItems": True}}}


def nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def names(n: int = 450) -> str:
    rng = random.Random(7)
    first = ["Ada", "Bo", "Cy", "Di", "Ed", "Flo", "Gus", "Hal", "Ivy", "Jo", "Kai", "Lu"]
    seen: set[str] = set()
    while len(seen) < n:
        seen.add(f"{rng.choice(first)}{rng.randrange(10_000)} Mc{rng.randrange(10_000)}")
    return ", ".join(sorted(seen))


def attack_requests(name: str, registered: dict[str, bool]) -> Callable[[int], dict[str, Any]]:
    """The body of B's i-th request in an attack."""
    if name == "schema_recursion":

        def schema_recursion(i: int) -> dict[str, Any]:
            if registered.get("recursive"):
                depth = 15 + i % 16
                return {
                    "query": 'mutation($d: JSON!) { addRecord(schema: "rec", data: $d) { id } }',
                    "variables": {"d": nested(depth)},
                }
            if registered.get("unique") and i % 2:
                return {
                    "query": 'mutation($d: JSON!) { addRecord(schema: "uniq", data: $d) { id } }',
                    "variables": {"d": {"xs": list(range(4000))}},
                }
            return {
                "query": 'mutation($s: JSON!) { registerRecordSchema(name: "rec", schema: $s) }',
                "variables": {"s": RECURSIVE},
            }

        return schema_recursion
    if name == "tokenizer":
        contents = ["(" * 8000, "(" * 20000, "\U0001f600" * 20000, "'s" * 10000, names()]

        def tokenizer(i: int) -> dict[str, Any]:
            return {
                "query": ADD,
                "variables": {
                    "i": {"sessionId": f"b-s{i % 8}", "content": contents[i % len(contents)]}
                },
            }

        return tokenizer
    search = 'search(query: "budget money plans", limit: 10) { score }'
    fixed = {
        "fragment_search": "{ ... on Query { " + search + " } }",
        "aliased_search": "{ " + " ".join(f"s{k}: {search}" for k in range(15)) + " }",
        "invalid": "{ nosuchfield }",
        "typename": "{ __typename }",
        "plain_search": "{ " + search + " }",
    }
    if name == "aliased_search":
        eight = "{ " + " ".join(f"s{k}: {search}" for k in range(8)) + " }"
        return lambda i: {"query": fixed[name] if i % 2 else eight}
    if name in fixed:
        return lambda i: {"query": fixed[name]}
    if name == "bad_offset":
        return lambda i: {
            "query": ADD,
            "variables": {
                "i": {
                    "sessionId": "b-offset",
                    "content": f"bad offset {i}",
                    "occurredAt": "2024-01-01T00:00:00+23:59",
                }
            },
        }
    raise ValueError(name)


async def attack(url: str, key: str, name: str, seconds: float) -> dict[str, Any]:
    """B's side, in a process of its own: CONNECTIONS closed loops for ``seconds``."""
    headers = {"Authorization": f"Bearer {key}"}
    outcomes: Counter[str] = Counter()
    statuses: Counter[str] = Counter()
    registered: dict[str, bool] = {}
    limits = httpx.Limits(max_connections=CONNECTIONS + 4, max_keepalive_connections=CONNECTIONS)
    async with httpx.AsyncClient(base_url=url, timeout=30, limits=limits) as client:
        if name == "schema_recursion":
            for label, schema_name, schema in (
                ("recursive", "rec", RECURSIVE),
                ("unique", "uniq", UNIQUE),
            ):
                response = await client.post(
                    "/graphql",
                    json={
                        "query": REGISTER,
                        "variables": {"n": schema_name, "s": schema},
                    },
                    headers=headers,
                )
                codes = codes_of(response)
                registered[label] = codes == ["ok"]
                outcomes[f"register {label}: {','.join(codes)}"] += 1
        body_of = attack_requests(name, registered)
        deadline = time.monotonic() + seconds
        counter = iter(range(10**9))

        async def loop() -> None:
            while time.monotonic() < deadline:
                body = body_of(next(counter))
                try:
                    response = await client.post("/graphql", json=body, headers=headers)
                    statuses[str(response.status_code)] += 1
                    outcomes.update(codes_of(response))
                except httpx.HTTPError as exc:
                    statuses[type(exc).__name__] += 1

        started = time.monotonic()
        await asyncio.gather(*(loop() for _ in range(CONNECTIONS)))
        took = time.monotonic() - started
    total = sum(statuses.values())
    return {
        "requests": total,
        "requests_per_s": round(total / took, 1) if took else None,
        "statuses": dict(statuses),
        "codes": dict(outcomes.most_common()),
        "registered": registered,
    }


# ---------------------------------------------------------------------------- the run


@dataclass
class Window:
    name: str
    start: float
    end: float = 0.0
    b: dict[str, Any] = field(default_factory=dict)


class RssSampler:
    def __init__(self, pid: int) -> None:
        self.proc = psutil.Process(pid)
        self.samples: list[tuple[float, float]] = []

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                self.samples.append((time.time(), self.proc.memory_info().rss / 2**20))
            except psutil.Error:
                return
            try:
                await asyncio.wait_for(stop.wait(), 1.0)
            except TimeoutError:
                pass

    def median(self, start: float, end: float) -> float | None:
        values = [mb for t, mb in self.samples if start <= t <= end]
        return round(statistics.median(values), 1) if values else None

    def peak(self, start: float, end: float) -> float | None:
        values = [mb for t, mb in self.samples if start <= t <= end]
        return round(max(values), 1) if values else None


def summarise(c: Tenant, start: float, end: float) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for op in ("add", "hot", "search", "recall"):
        values = [ms for t, o, ms in c.samples if o == op and start <= t <= end]
        out[op] = {
            "n": len(values),
            "p50": percentile(values, 0.5),
            "p99": percentile(values, 0.99),
        }
    return out


def ratios(during: dict[str, dict[str, Any]], base: dict[str, dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for op, row in during.items():
        ref = base.get(op, {})
        for q in ("p50", "p99"):
            if row[q] is not None and ref.get(q):
                out[f"{op}_{q}"] = round(row[q] / ref[q], 2)
    return out


async def run_attack_process(url: str, key: str, name: str, seconds: float) -> dict[str, Any]:
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
        str(seconds),
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), seconds + 120)
    try:
        result: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    except (ValueError, IndexError):
        result = {"error": f"the attack process exited {proc.returncode}"}
    return result


async def neighbours(
    baseline_s: float,
    attack_s: float,
    gap_s: float,
    settle_s: float,
    attacks: tuple[str, ...],
    redis_db: int | None = None,
) -> dict[str, Any]:
    tenants = {"b": f"nb-b-{uuid.uuid4().hex[:8]}", "c": f"nb-c-{uuid.uuid4().hex[:8]}"}
    keys = {name: f"nb-{name}-{uuid.uuid4().hex}" for name in tenants}
    log = Path(tempfile.gettempdir()) / f"graphmem-neighbours-{uuid.uuid4().hex[:6]}.log"
    server = Server({keys[n]: t for n, t in tenants.items()}, log, redis_db=redis_db)
    if redis_db is not None:
        # A database of its own, emptied: an earlier run's hostile backlog must not be
        # what this run's worker spends its time on.
        import redis

        redis.Redis.from_url(server.redis_url).flushdb()
    server.start()
    windows: list[Window] = []
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            c = Tenant(client, keys["c"])
            rss = RssSampler(server.proc.pid)  # type: ignore[union-attr]
            stop, probe_stop = asyncio.Event(), asyncio.Event()
            # A few memories so that searches have something to rank.
            for n in range(40):
                text = " ".join(random.choices(WORDS, k=10))
                await c.call(
                    ADD, {"i": {"sessionId": f"c-s{n % 4}", "userId": "c-user", "content": text}}
                )
            await c.wait_enrichment_ready()
            background = [asyncio.create_task(x) for x in (*c.mix(stop), rss.run(stop))]
            await asyncio.sleep(min(5.0, baseline_s / 4))  # warm-up, not counted
            base = Window("baseline", time.time())
            probe = asyncio.create_task(c.probe_findable(probe_stop))
            await asyncio.sleep(baseline_s)
            base.end = time.time()
            probe_stop.set()
            await probe
            windows.append(base)
            for name in attacks:
                await asyncio.sleep(gap_s)
                window = Window(name, time.time())
                probe_stop = asyncio.Event()
                probe = (
                    asyncio.create_task(c.probe_findable(probe_stop))
                    if name in ENRICHMENT_ATTACKS
                    else None
                )
                window.b = await run_attack_process(server.url, keys["b"], name, attack_s)
                window.end = time.time()
                if probe is not None:
                    probe_stop.set()
                    await probe
                windows.append(window)
                print(
                    f"{name}: {summarise(c, window.start, window.end)} B {window.b}",
                    file=sys.stderr,
                )
            attacks_end = time.time()
            await asyncio.sleep(settle_s)
            settled = time.time()
            stop.set()
            await asyncio.gather(*background)
    finally:
        server.stop()
    problems = server.log_problems()
    base_rows = summarise(c, base.start, base.end)
    rss_base = rss.median(base.start, base.end)
    rss_after = rss.median(settled - 5, settled)
    results: dict[str, Any] = {
        "connections_per_attack": CONNECTIONS,
        "attack_seconds": attack_s,
        "baseline": {
            "c": base_rows,
            "findable_s": [f for _, f in c.findable if base.start <= _ <= base.end],
        },
        "attacks": {},
        "c_refused": dict(c.problems),
        "rss": {
            "baseline_mb": rss_base,
            "peak_mb": rss.peak(base.start, attacks_end),
            "after_settle_mb": rss_after,
            "settle_seconds": settle_s,
            "back_within_50mb": (
                rss_after is not None and rss_base is not None and rss_after - rss_base <= RSS_MB
            ),
        },
        "server_log_problems": problems[:20],
        "samples": [(round(t, 2), op, round(ms, 1)) for t, op, ms in c.samples],
        "rss_samples": [(round(t, 2), round(mb, 1)) for t, mb in rss.samples],
        "windows": [(w.name, w.start, w.end) for w in windows],
    }
    server_errors = 0
    for w in windows[1:]:
        rows = summarise(c, w.start, w.end)
        r = ratios(rows, base_rows)
        b_statuses = w.b.get("statuses", {})
        b_5xx = sum(n for s, n in b_statuses.items() if s.isdigit() and int(s) >= 500)
        b_internal = w.b.get("codes", {}).get("INTERNAL", 0)
        server_errors += b_5xx + b_internal
        findable = [f for t, f in c.findable if w.start <= t <= w.end]
        entry: dict[str, Any] = {
            "c": rows,
            "ratios": r,
            "within_2x": all(v <= RATIO for v in r.values()),
            "b": w.b,
            "b_5xx": b_5xx,
            "b_internal": b_internal,
            "rss_peak_mb": rss.peak(w.start, w.end),
        }
        if w.name in ENRICHMENT_ATTACKS:
            entry["findable_s"] = [None if f is None else round(f, 2) for f in findable]
            entry["findable_within_2s"] = bool(findable) and all(
                f is not None and f <= FINDABLE_SECONDS for f in findable
            )
        results["attacks"][w.name] = entry
    c_errors = sum(n for k, n in c.problems.items() if "INTERNAL" in k or "http 5" in k)
    results["verdicts"] = {
        "c_within_2x_every_attack": all(a["within_2x"] for a in results["attacks"].values()),
        "findable_within_2s": all(
            a.get("findable_within_2s", True) for a in results["attacks"].values()
        ),
        "no_5xx_or_internal": server_errors == 0 and c_errors == 0,
        "c_never_refused": not c.problems,
        "rss_back_within_50mb": results["rss"]["back_within_50mb"],
    }
    return results


# ---------------------------------------------------------------------------- report


def plot(results: dict[str, Any], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    samples = results["samples"]
    if not samples:
        return
    t0 = samples[0][0]
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(11, 6), sharex=True, height_ratios=[3, 1])
    for op, colour in (
        ("hot", "tab:blue"),
        ("search", "tab:orange"),
        ("recall", "tab:green"),
        ("add", "tab:purple"),
    ):
        xs = [t - t0 for t, o, _ in samples if o == op]
        ys = [ms for _, o, ms in samples if o == op]
        ax.scatter(xs, ys, s=3, label=f"C {op}", color=colour, alpha=0.6)
    for name, start, end in results["windows"][1:]:
        ax.axvspan(start - t0, end - t0, color="grey", alpha=0.12)
        ax.text(start - t0, 1, name, fontsize=7, rotation=90, va="bottom")
    ax.set_yscale("log")
    ax.set_ylabel("C latency (ms, log)")
    ax.legend(loc="upper right", fontsize=7, markerscale=3)
    ax.set_title("Tenant C's latency while tenant B attacks (shaded)")
    ax2.plot([t - t0 for t, _ in results["rss_samples"]], [mb for _, mb in results["rss_samples"]])
    ax2.set_ylabel("API RSS (MB)")
    ax2.set_xlabel("seconds")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _ms(v: Any) -> str:
    return "-" if v is None else f"{v:g}"


def report(r: dict[str, Any]) -> str:
    run_ = r["run"]
    base = r["baseline"]["c"]
    rows = []
    for name, a in r["attacks"].items():
        c = a["c"]
        b = a["b"]
        codes = ", ".join(f"{k} {v}" for k, v in list(b.get("codes", {}).items())[:4])
        worst = max(a["ratios"].values()) if a["ratios"] else None
        found = ""
        if "findable_s" in a:
            values = [f for f in a["findable_s"] if f is not None]
            found = f" found by meaning in ≤ {max(values):.2f} s" if values else " not found"
            found += f" ({len(values)}/{len(a['findable_s'])})"
        rows.append(
            f"| {name} | {_pair(c['hot'])} | {_pair(c['search'])} | "
            f"{_pair(c['recall'])} | {_pair(c['add'])} | "
            f"{_ms(worst)}x{found} | {b.get('requests_per_s', '-')} | {codes} |"
        )
    v = r["verdicts"]
    rss = r["rss"]
    baseline_row = "| | " + " | ".join(_pair(base[op]) for op in ("hot", "search", "recall", "add"))
    baseline_row += " |"
    return f"""## Neighbours: one tenant's attacks against another's latency

`bench/neighbours.py`: a real `graphmem serve` (API and enrichment worker) on loopback,
{run_["date"]}, commit {run_["commit"]}, {run_["machine"]}. Tenant C runs a paced mix (4 adds,
8 hot reads, 4 searches, 2 recalls a second; latency counted from when a request was
due); tenant B sends each attack for {r["attack_seconds"]:g} s from
{r["connections_per_attack"]} connections of its own process, ignoring `retryAfterMs`.
Ratios are C's p50 and p99 during the attack over C's baseline in the same run.

| C alone (baseline) | hot p50 / p99 ms | search | recall | add |
|---|---|---|---|---|
{baseline_row}

| attack | C hot p50 / p99 ms | C search | C recall | C add | worst ratio | B req/s | B's answers |
|---|---|---|---|---|---|---|---|
{chr(10).join(rows)}

- C within {RATIO:g}x of its baseline (p50 and p99) in every attack:
  **{_yes(v["c_within_2x_every_attack"])}**; C's new memory found by meaning within
  {FINDABLE_SECONDS:g} s during the enrichment attacks: **{_yes(v["findable_within_2s"])}**;
  C never refused: {_yes(v["c_never_refused"])}
- 5xx or INTERNAL from anyone: **{"none" if v["no_5xx_or_internal"] else "some"}**
- API RSS: baseline {rss["baseline_mb"]} MB, peak {rss["peak_mb"]} MB,
  {rss["settle_seconds"]:g} s after the attacks {rss["after_settle_mb"]} MB: back within
  {RSS_MB:g} MB **{_yes(v["rss_back_within_50mb"])}**

![C's latency and the API's RSS during the attacks](bench/results/neighbours.png)
"""


def _yes(ok: bool | None) -> str:
    return "yes" if ok else "no"


def _pair(row: dict[str, Any]) -> str:
    return f"{_ms(row['p50'])} / {_ms(row['p99'])}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--attack-seconds", type=float, default=45.0)
    parser.add_argument("--baseline-seconds", type=float, default=30.0)
    parser.add_argument("--settle-seconds", type=float, default=60.0)
    parser.add_argument("--only", nargs="*", choices=ATTACKS, help="run only these attacks")
    parser.add_argument("--quick", action="store_true", help="a few seconds each (CI smoke)")
    parser.add_argument("--out", type=Path, help="write JSON here instead of bench/results")
    parser.add_argument(
        "--redis-db", type=int, help="a Redis database of the run's own, emptied first"
    )
    parser.add_argument("--attack", choices=ATTACKS, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--key", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.attack:  # B's side, started by the run
        result = asyncio.run(attack(args.url, args.key, args.attack, args.attack_seconds))
        print(json.dumps(result))
        return 0
    if args.quick:
        baseline, seconds, gap, settle = 6.0, 3.0, 1.0, 3.0
    else:
        baseline, seconds, gap, settle = (
            args.baseline_seconds,
            min(60.0, args.attack_seconds),
            5.0,
            args.settle_seconds,
        )
    attacks = tuple(args.only) if args.only else ATTACKS
    results = {"run": run_info(), "quick": args.quick} | asyncio.run(
        neighbours(baseline, seconds, gap, settle, attacks, args.redis_db)
    )
    if args.out:
        args.out.write_text(json.dumps(results, indent=1))
        plot(results, args.out.with_suffix(".png"))
    else:
        save_json("neighbours", results)
        plot(results, RESULTS / "neighbours.png")
        if not args.quick:
            update_section("neighbours", report(results))
    print(json.dumps(results["verdicts"]), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
