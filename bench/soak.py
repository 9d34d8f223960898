"""Soak: a real ``graphmem serve`` under bounded mixed load for a long time.

The program starts its own server (one worker, three tenants, 127.0.0.1 only) against
``NEO4J_URI``/``REDIS_URL`` and runs, for ``--minutes``, about sixteen concurrent clients at
bounded rates (each sleeps to its own schedule; nothing runs flat out):

- writers: ``addMemory`` and ``addMemories``, each content carrying the run id and a
  sequence number, so every acknowledged id is tracked with the text it was given;
- a spiller: explicit ``spill`` of a few items of a random session;
- ``recall`` and ``search`` with varied queries (LoCoMo questions and word pairs), scopes
  (session, user, tenant) and retrievers;
- churn: documents whose text is new every time (unique operation names and aliases), so
  the server's parse and validation caches keep seeing texts they have not cached;
- long-lived ``memoryEvents`` subscriptions over graphql-transport-ws (one per tenant and
  one filtered), counting what they receive.

Every ``--sample-seconds`` (10) it records the server's RSS, open descriptors and threads,
p50/p99 per operation over the window, errors (any non-200, any GraphQL error by
``extensions.code``, any connection failure or 30 s timeout) and events received. At the
end it checks that every acknowledged memory can still be read (``hot`` of its session or
``memory(itemId:)``) with the content it was given.

    .venv/bin/python -m bench.soak [--minutes 30] [--quick] [--out FILE]

Output: ``bench/results/soak.json``, ``bench/results/soak.png`` and the ``soak`` section
of BENCHMARKS.md. With ``--out`` the JSON goes there, the plot beside it, and
BENCHMARKS.md is left alone; ``--quick`` (about 30 s of load, for the smoke test) never
touches BENCHMARKS.md either.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import random
import signal
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import websockets

from bench.lib.documents import ADD, RECALL, SPILL
from bench.lib.locomo import texts_and_questions
from bench.lib.report import RESULTS, run_info, save_json, update_section
from bench.lib.server import Conn, Server, Stats, error_codes, paced
from bench.lib.stats import percentile

OPS = ("addMemory", "addMemories", "spill", "recall", "search", "churn")
# The RSS rule (stated in BENCHMARKS.md): the first WARMUP of the run is warm-up; the
# baseline is the median of the samples after it; RSS is flat when the largest sample of
# the second half exceeds the baseline by at most RSS_TOLERANCE_MB or RSS_TOLERANCE_SHARE
# of the baseline, whichever is larger.
WARMUP = 0.2
RSS_TOLERANCE_MB = 20.0
RSS_TOLERANCE_SHARE = 0.05


@dataclass(frozen=True)
class Plan:
    """Worker counts and per-worker intervals (seconds between requests)."""

    seconds: float
    sample_seconds: float
    tenants: int = 3
    sessions_per_tenant: int = 4
    writers: int = 4
    write_interval: float = 0.5
    spill_interval: float = 3.0
    recallers: int = 2
    recall_interval: float = 2.0
    searchers: int = 2
    search_interval: float = 2.0
    churners: int = 3
    churn_interval: float = 1 / 3
    # subscriptions: one per tenant plus one filtered on SPILLED (tenant 0)

    def concurrency(self) -> int:
        http = self.writers + 1 + self.recallers + self.searchers + self.churners
        return http + self.tenants + 1


# ---------------------------------------------------------------------------- the load


ADD_MANY = "mutation($is: [AddMemoryInput!]!) { addMemories(inputs: $is) { id } }"
SEARCH = """query($q: String!, $s: ID, $u: ID, $n: Int!, $r: Retriever!) {
  search(query: $q, sessionId: $s, userId: $u, limit: $n, retriever: $r) {
    item { id sessionId } score similarity } }"""
SUBSCRIBE = """subscription($f: EventFilter) { memoryEvents(filter: $f) {
  kind sessionId itemIds } }"""
TYPES = ["MESSAGE"] * 7 + ["FACT", "DECISION", "PREFERENCE"]
RETRIEVERS = ["HYBRID"] * 3 + ["VECTOR", "FULLTEXT"]


@dataclass
class Load:
    server: Server
    plan: Plan
    run_id: str
    tenants: list[str]  # index → tenant
    keys: list[str]  # index → key
    stats: Stats = field(default_factory=lambda: Stats(OPS))
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    # id → tenant, session, content, seconds into the load when acknowledged
    acked: dict[str, tuple[int, str, str, float]] = field(default_factory=dict)
    load_started: float = 0.0
    added_events: dict[int, set[str]] = field(default_factory=lambda: defaultdict(set))
    spilled: int = 0
    seq: itertools.count[int] = field(default_factory=itertools.count)
    texts: list[str] = field(default_factory=list)
    questions: list[str] = field(default_factory=list)

    def session(self, tenant: int, k: int) -> str:
        return f"soak-{self.run_id}-t{tenant}-s{k}"

    def any_session(self) -> tuple[int, str]:
        tenant = random.randrange(len(self.tenants))
        return tenant, self.session(tenant, random.randrange(self.plan.sessions_per_tenant))

    def item(self, tenant: int) -> dict[str, Any]:
        k = random.randrange(self.plan.sessions_per_tenant)
        seq = next(self.seq)
        return {
            "sessionId": self.session(tenant, k),
            "userId": f"soak-user-{k % 2}",
            "type": random.choice(TYPES),
            "content": f"[soak {self.run_id} #{seq}] {random.choice(self.texts)}",
        }

    def query_text(self) -> str:
        if random.random() < 0.6:
            return random.choice(self.questions)
        return " ".join(random.choice(self.texts).split()[:3]) or "soak"

    def scope(self, tenant: int) -> tuple[str | None, str | None]:
        roll = random.random()
        if roll < 0.4:
            return self.session(tenant, random.randrange(self.plan.sessions_per_tenant)), None
        if roll < 0.7:
            return None, f"soak-user-{random.randrange(2)}"
        return None, None

    # -- workers

    async def writer(self, n: int) -> None:
        conn, tenant = Conn(self.server, self.stats), n % len(self.tenants)
        key = self.keys[tenant]
        calls = itertools.count()

        async def step() -> None:
            if next(calls) % 4 == 3:
                inputs = [self.item(tenant) for _ in range(3)]
                session = inputs[0]["sessionId"]
                for i in inputs:
                    i["sessionId"] = session
                data = await conn.gql("addMemories", key, ADD_MANY, {"is": inputs})
                added = (data or {}).get("addMemories") or []
            else:
                inputs = [self.item(tenant)]
                data = await conn.gql("addMemory", key, ADD, {"i": inputs[0]})
                added = [a] if (a := (data or {}).get("addMemory")) else []
            for given, got in zip(inputs, added, strict=False):
                at = round(time.monotonic() - self.load_started, 1)
                self.acked[got["id"]] = (tenant, given["sessionId"], given["content"], at)

        try:
            await paced(self.stop, self.plan.write_interval, step)
        finally:
            await conn.close()

    async def spiller(self) -> None:
        conn = Conn(self.server, self.stats)

        async def step() -> None:
            tenant, session = self.any_session()
            data = await conn.gql(
                "spill", self.keys[tenant], SPILL, {"s": session, "n": random.randint(2, 10)}
            )
            if data and data.get("spill"):
                self.spilled += data["spill"]["spilledCount"]

        try:
            await paced(self.stop, self.plan.spill_interval, step)
        finally:
            await conn.close()

    async def recaller(self, n: int) -> None:
        conn = Conn(self.server, self.stats)

        async def step() -> None:
            tenant = random.randrange(len(self.tenants))
            session, user = self.scope(tenant)
            recall = {
                "query": self.query_text(),
                "sessionId": session,
                "userId": user,
                "limit": random.randint(1, 5),
                "retriever": random.choice(RETRIEVERS),
                "autoPromote": random.random() < 0.5,
            }
            await conn.gql("recall", self.keys[tenant], RECALL, {"i": recall})

        try:
            await paced(self.stop, self.plan.recall_interval, step)
        finally:
            await conn.close()

    async def searcher(self, n: int) -> None:
        conn = Conn(self.server, self.stats)

        async def step() -> None:
            tenant = random.randrange(len(self.tenants))
            session, user = self.scope(tenant)
            variables = {
                "q": self.query_text(),
                "s": session,
                "u": user,
                "n": random.randint(3, 15),
                "r": random.choice(RETRIEVERS),
            }
            await conn.gql("search", self.keys[tenant], SEARCH, variables)

        try:
            await paced(self.stop, self.plan.search_interval, step)
        finally:
            await conn.close()

    async def churner(self, n: int, counter: itertools.count[int]) -> None:
        """Documents never sent before: a new operation name and alias each time, over a
        few shapes of read-only query."""
        conn = Conn(self.server, self.stats)

        async def step() -> None:
            tenant, session = self.any_session()
            m = next(counter)
            name = f"Churn_{self.run_id}_{m}"
            shapes = [
                f'query {name} {{ h{m}: hot(sessionId: "{session}") {{ id }} }}',
                f'query {name} {{ memoryStatus(sessionId: "{session}") '
                f"{{ hot {{ items tokens }} c{m}: cold {{ items }} }} }}",
                f'query {name} {{ stats(sessionId: "{session}") {{ tier type i{m}: items }} }}',
                f'query {name} {{ sessionConfig(sessionId: "{session}") '
                f"{{ spillCount l{m}: hotTokenLimit }} }}",
                f'{{ x{m}: hot(sessionId: "{session}") {{ id tier }} }}',
            ]
            await conn.gql("churn", self.keys[tenant], shapes[m % len(shapes)])

        try:
            await paced(self.stop, self.plan.churn_interval, step)
        finally:
            await conn.close()

    async def subscriber(
        self, name: str, tenant: int, variables: dict[str, Any], ready: asyncio.Event
    ) -> None:
        """Runs until cancelled; a dropped connection is an error and is reopened."""
        url = f"ws://127.0.0.1:{self.server.port}/graphql"
        while True:
            try:
                async with websockets.connect(
                    url,
                    subprotocols=[websockets.Subprotocol("graphql-transport-ws")],
                    open_timeout=10,
                ) as ws:
                    payload = {"Authorization": f"Bearer {self.keys[tenant]}"}
                    await ws.send(json.dumps({"type": "connection_init", "payload": payload}))
                    ack = json.loads(await asyncio.wait_for(ws.recv(), 10))
                    if ack.get("type") != "connection_ack":
                        raise RuntimeError(f"no connection_ack: {ack}")
                    subscribe = {"query": SUBSCRIBE, "variables": variables}
                    await ws.send(
                        json.dumps({"id": "1", "type": "subscribe", "payload": subscribe})
                    )
                    await asyncio.sleep(0.5)  # the server subscribes to the tenant's channel
                    ready.set()
                    async for raw in ws:
                        if not self.on_message(name, tenant, variables, json.loads(raw)):
                            break
                        if json.loads(raw).get("type") == "ping":
                            await ws.send(json.dumps({"type": "pong"}))
                self.stats.error(f"subscription {name}", "closed")
            except asyncio.CancelledError:
                raise
            except (
                OSError,
                TimeoutError,
                RuntimeError,
                ValueError,
                websockets.WebSocketException,
            ) as exc:
                self.stats.error(f"subscription {name}", type(exc).__name__, str(exc))
            await asyncio.sleep(1)

    def on_message(
        self, name: str, tenant: int, variables: dict[str, Any], message: dict[str, Any]
    ) -> bool:
        """Counts one message; False when the subscription ended."""
        kind = message.get("type")
        if kind == "next":
            event = (message["payload"].get("data") or {}).get("memoryEvents")
            if event is None:
                for code in error_codes(message["payload"]) or ["NO_DATA"]:
                    self.stats.error(f"subscription {name}", code, str(message))
                return True
            self.stats.event(event["kind"])
            if event["kind"] == "ADDED" and not variables:
                self.added_events[tenant].update(event["itemIds"])
        elif kind in ("error", "complete"):
            self.stats.error(f"subscription {name}", kind, str(message))
            return False
        return True


# ---------------------------------------------------------------------------- a run


async def soak(
    server: Server, plan: Plan, run_id: str, tenants: list[str], keys: list[str]
) -> dict[str, Any]:
    load = Load(server, plan, run_id, tenants, keys)
    load.texts, load.questions = texts_and_questions()
    started = time.monotonic()
    samples: list[dict[str, Any]] = []
    server.resources()  # starts the CPU counter

    subscriptions = []
    ready_events = []
    for tenant in range(len(tenants)):
        ready = asyncio.Event()
        ready_events.append(ready)
        subscriptions.append(asyncio.create_task(load.subscriber(f"t{tenant}", tenant, {}, ready)))
    ready = asyncio.Event()
    ready_events.append(ready)
    subscriptions.append(
        asyncio.create_task(load.subscriber("t0-spilled", 0, {"f": {"kinds": ["SPILLED"]}}, ready))
    )
    await asyncio.wait_for(asyncio.gather(*(r.wait() for r in ready_events)), 30)

    churn_counter = itertools.count()
    workers = [
        *(load.writer(n) for n in range(plan.writers)),
        load.spiller(),
        *(load.recaller(n) for n in range(plan.recallers)),
        *(load.searcher(n) for n in range(plan.searchers)),
        *(load.churner(n, churn_counter) for n in range(plan.churners)),
    ]
    load_started = load.load_started = time.monotonic()
    tasks = [asyncio.create_task(w) for w in workers]

    def sample() -> None:
        row: dict[str, Any] = {"t_s": round(time.monotonic() - load_started, 1)}
        row |= server.resources()
        row |= load.stats.window()
        row["acked"] = len(load.acked)
        samples.append(row)
        p99 = ", ".join(
            f"{op} {o['p99_ms']:.0f}" for op, o in row["ops"].items() if o["p99_ms"] is not None
        )
        errors = sum(row["errors"].values())
        print(
            f"[{row['t_s']:7.1f}s] RSS {row['rss_mb']:.0f} MB (API {row['api_rss_mb']:.0f}, "
            f"search cache {row['search_cache_mb']} MB, heap in use {row['heap_in_use_mb']}, "
            f"free {row['heap_free_mb']}), cpu {row['cpu_percent']:.0f}% "
            f"(client {row['client_cpu_percent']:.0f}%, all {row['machine_cpu_percent']:.0f}%), "
            f"fds {row['fds']}, acked {row['acked']}, events {sum(row['events'].values())}, "
            f"errors {errors}; p99 ms: {p99}",
            file=sys.stderr,
        )

    try:
        end = load_started + plan.seconds
        next_sample = load_started + plan.sample_seconds
        while (now := time.monotonic()) < end:
            await asyncio.sleep(min(next_sample, end) - now)
            if time.monotonic() >= next_sample - 0.01:
                sample()
                next_sample += plan.sample_seconds
            if server.proc is not None and server.proc.poll() is not None:
                load.stats.error("server", f"exited {server.proc.returncode}")
                break
        load.stop.set()
        await asyncio.gather(*tasks)
        if samples and samples[-1]["t_s"] < plan.seconds - 0.5:
            sample()  # the part-window at the end
        load_seconds = time.monotonic() - load_started
        await asyncio.sleep(3)  # events still in flight reach the subscribers
    finally:
        load.stop.set()
        for task in [*tasks, *subscriptions]:
            task.cancel()
        await asyncio.gather(*tasks, *subscriptions, return_exceptions=True)

    print("verifying acknowledged memories ...", file=sys.stderr)
    verified = await verify(load)
    added_seen = sum(
        1 for item, (tenant, *_) in load.acked.items() if item in load.added_events[tenant]
    )
    return {
        "samples": samples,
        "load_seconds": round(load_seconds, 1),
        "elapsed_s": round(time.monotonic() - started, 1),
        "requests": dict(load.stats.total_requests),
        "errors": dict(load.stats.total_errors),
        "error_examples": load.stats.error_examples,
        "events": dict(load.stats.total_events),
        "added_events_for_acked": added_seen,
        "spilled_explicitly": load.spilled,
        "churn_documents": next(churn_counter),
        "latency_ms": {
            op: {
                "p50": round(statistics.median(v), 2),
                "p99": round(percentile(v, 0.99), 2),
                "max": round(max(v), 1),
            }
            for op, v in load.stats.all_latencies.items()
            if v
        },
        "verify": verified,
    }


async def verify(load: Load) -> dict[str, Any]:
    """Every acknowledged id, found with its content: first in its session's hot tier,
    then one by one with ``memory(itemId:)`` (ten per request, as aliases)."""
    stats = Stats()
    conn = Conn(load.server, stats)
    found: dict[str, str] = {}  # id → tier
    altered: list[str] = []
    try:
        sessions = {(tenant, session) for tenant, session, *_ in load.acked.values()}
        for tenant, session in sorted(sessions):
            data = await conn.gql(
                "verify",
                load.keys[tenant],
                "query($s: ID!) { hot(sessionId: $s) { id content tier } }",
                {"s": session},
            )
            for item in (data or {}).get("hot") or []:
                if item["id"] in load.acked:
                    _check(load, item, found, altered)
        rest = [i for i in load.acked if i not in found]
        by_tenant: dict[int, list[str]] = defaultdict(list)
        for item in rest:
            by_tenant[load.acked[item][0]].append(item)
        queue: asyncio.Queue[tuple[int, list[str]]] = asyncio.Queue()
        for tenant, ids in by_tenant.items():
            for start in range(0, len(ids), 10):
                queue.put_nowait((tenant, ids[start : start + 10]))

        async def reader() -> None:
            own = Conn(load.server, stats)
            try:
                while not queue.empty():
                    tenant, ids = queue.get_nowait()
                    variables = ", ".join(f"$i{n}: ID!" for n in range(len(ids)))
                    fields = " ".join(
                        f"m{n}: memory(itemId: $i{n}) {{ id content tier }}"
                        for n in range(len(ids))
                    )
                    data = await own.gql(
                        "verify",
                        load.keys[tenant],
                        f"query({variables}) {{ {fields} }}",
                        {f"i{n}": item for n, item in enumerate(ids)},
                    )
                    for item in (data or {}).values():
                        if item is not None:
                            _check(load, item, found, altered)
            finally:
                await own.close()

        await asyncio.gather(*(reader() for _ in range(4)))
    finally:
        await conn.close()
    lost = [i for i in load.acked if i not in found]
    return {
        "acknowledged": len(load.acked),
        "found": len(found),
        "lost": len(lost),
        "lost_examples": [
            {"id": i, "session": load.acked[i][1], "acked_at_s": load.acked[i][3]}
            for i in lost[:10]
        ],
        # when the lost ones were acknowledged (seconds into the load, by minute)
        "lost_acked_by_minute": dict(Counter(int(load.acked[i][3] // 60) for i in lost)),
        "altered": len(altered),
        "altered_examples": altered[:10],
        "tiers": dict(Counter(found.values())),
        "errors": dict(stats.total_errors),
    }


def _check(load: Load, item: dict[str, Any], found: dict[str, str], altered: list[str]) -> None:
    if item["content"] == load.acked[item["id"]][2]:
        found[item["id"]] = item["tier"]
    else:
        altered.append(item["id"])


# ---------------------------------------------------------------------------- judging


def rss_verdict(samples: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    after = [s for s in samples if s["t_s"] > WARMUP * seconds]
    second_half = [s for s in samples if s["t_s"] > seconds / 2]
    if len(after) < 2 or not second_half:
        return {"flat": None, "reason": "too few samples"}
    baseline = statistics.median(s["rss_mb"] for s in after)
    peak = max(s["rss_mb"] for s in second_half)
    tolerance = max(RSS_TOLERANCE_MB, RSS_TOLERANCE_SHARE * baseline)
    # least-squares slope over the samples after warm-up, MB per minute (informative)
    xs, ys = [s["t_s"] / 60 for s in after], [s["rss_mb"] for s in after]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx if sxx else 0.0
    return {
        "flat": peak - baseline <= tolerance,
        "baseline_mb": round(baseline, 1),
        "second_half_max_mb": round(peak, 1),
        "growth_mb": round(peak - baseline, 1),
        "tolerance_mb": round(tolerance, 1),
        "start_mb": samples[0]["rss_mb"],
        "end_mb": samples[-1]["rss_mb"],
        "slope_mb_per_min": round(slope, 2),
    }


def plot(results: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    samples = results["samples"]
    minutes = [s["t_s"] / 60 for s in samples]
    fig, (rss, lat, err) = plt.subplots(3, 1, figsize=(8, 9), sharex=True)
    rss.plot(minutes, [s["rss_mb"] for s in samples], marker=".", color="C0", label="all")
    if all(s.get("api_rss_mb") is not None for s in samples):
        rss.plot(minutes, [s["api_rss_mb"] for s in samples], color="C1", lw=0.8, label="API")
    if all(s.get("search_cache_mb") is not None for s in samples):
        api = [s["api_rss_mb"] - s["search_cache_mb"] for s in samples]
        rss.plot(minutes, api, color="C2", lw=0.8, label="API less its search cache")
    if all(s.get("heap_in_use_mb") is not None for s in samples):
        # the API's C heap on an axis of its own: live blocks, and the free ones it keeps
        heap = rss.twinx()
        heap.plot(
            minutes, [s["heap_in_use_mb"] for s in samples], color="C4", lw=0.8, label="in use"
        )
        heap.plot(
            minutes, [s["heap_free_mb"] for s in samples], color="C5", lw=0.8, label="kept free"
        )
        heap.set_ylabel("API C heap, MB")
        heap.legend(fontsize=7, loc="upper left", title="API C heap", title_fontsize=7)
    verdict = results["summary"]["rss"]
    if verdict.get("baseline_mb") is not None:
        base, tol = verdict["baseline_mb"], verdict["tolerance_mb"]
        rss.axhline(base, color="grey", lw=0.8, ls="--", label=f"baseline {base:.0f} MB")
        rss.axhspan(base - tol, base + tol, color="grey", alpha=0.12, label=f"± {tol:.0f} MB")
        rss.axvline(WARMUP * results["load_seconds"] / 60, color="grey", lw=0.8, ls=":")
        rss.legend(fontsize=7, loc="lower right")
    rss.set(
        ylabel="server RSS, MB", title=f"soak: {results['load_seconds'] / 60:.1f} min of mixed load"
    )
    for n, op in enumerate(OPS):
        ys = [s["ops"][op]["p99_ms"] for s in samples]
        if any(y is not None for y in ys):
            lat.plot(
                minutes, [float("nan") if y is None else y for y in ys], label=op, color=f"C{n}"
            )
    lat.set(ylabel="p99 ms (per window)", yscale="log")
    lat.legend(fontsize=7, ncol=3)
    errors = [sum(s["errors"].values()) for s in samples]
    events = [sum(s["events"].values()) for s in samples]
    err.bar(
        minutes,
        errors,
        width=0.6 * (minutes[1] - minutes[0]) if len(minutes) > 1 else 0.1,
        color="C3",
        label="errors",
    )
    err.set(ylabel="errors per window", xlabel="minutes", ylim=(0, max(1, *errors) * 1.2))
    twin = err.twinx()
    twin.plot(minutes, events, color="C2", marker=".", label="events received")
    twin.plot(
        minutes,
        [sum(o["requests"] for o in s["ops"].values()) for s in samples],
        color="C7",
        marker=".",
        label="requests",
    )
    twin.set(ylabel="per window")
    handles = err.get_legend_handles_labels()[0] + twin.get_legend_handles_labels()[0]
    err.legend(handles, [h.get_label() for h in handles], fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def report(r: dict[str, Any]) -> str:
    run, s, v = r["run"], r["summary"], r["verify"]
    rss = s["rss"]
    plan = r["plan"]
    lat_rows = "\n".join(
        f"| {op} | {r['requests'].get(op, 0):,} | {ms['p50']} | {ms['p99']} | {ms['max']} |"
        for op, ms in sorted(r["latency_ms"].items(), key=lambda kv: OPS.index(kv[0]))
    )
    errors = ", ".join(f"{k}: {n}" for k, n in s["errors_by_code"].items()) or "none"
    events = ", ".join(f"{k} {n:,}" for k, n in sorted(r["events"].items()))
    return f"""## Soak: {r["load_seconds"] / 60:.0f} minutes of mixed load on one server

`bench/soak.py --minutes {r["minutes"]:g}{_db(r)}`: one `graphmem serve` worker, \
{plan["tenants"]} tenants,
{plan["concurrency"]} concurrent clients on loopback at bounded rates ({plan["writers"]} writers \
at {1 / plan["write_interval"]:g} req/s each, one of four calls an `addMemories` of 3; explicit
`spill` every {plan["spill_interval"]:g} s; {plan["recallers"]} `recall` and \
{plan["searchers"]} `search` clients at {1 / plan["recall_interval"]:g} req/s each; \
{plan["churners"]} clients at {1 / plan["churn_interval"]:g} req/s each sending documents never
seen before ({r["churn_documents"]:,} distinct texts against a parse cache of 256);
{plan["tenants"] + 1} `memoryEvents` subscriptions). Maintenance on, as in
production.{_cache(r)} Sampled every {plan["sample_seconds"]:g} s. {run["date"]}, commit \
{run["commit"]}, {run["machine"]}.

| check | result | verdict |
|---|---|---|
| server RSS flat after warm-up | baseline {rss["baseline_mb"]} MB, largest in the second half \
{rss["second_half_max_mb"]} MB (+{rss["growth_mb"]} MB, tolerance {rss["tolerance_mb"]} MB); \
start {rss["start_mb"]} MB, end {rss["end_mb"]} MB, \
slope {rss["slope_mb_per_min"]} MB/min after warm-up \
| {_yes(rss["flat"])} |
| errors (non-200, GraphQL errors, connection failures, timeouts) | {s["errors"]} of \
{s["requests"]:,} requests ({errors}) | {_yes(s["errors"] == 0)} |
| acknowledged memories lost | {v["lost"]} of {v["acknowledged"]:,} (found in: \
{", ".join(f"{k} {n:,}" for k, n in sorted(v["tiers"].items()))}; altered content: {v["altered"]}) \
| {_yes(v["lost"] == 0 and v["altered"] == 0)} |
| subscription events | {events}; ADDED events seen for {r["added_events_for_acked"]:,} of \
{v["acknowledged"]:,} acknowledged ids | |

**Verdict: {s["verdict"]}.** RSS rule: the first {WARMUP:.0%} of the run is warm-up; the
baseline is the median RSS of the samples after it; RSS counts as flat when the largest
sample of the second half is at most {RSS_TOLERANCE_MB:g} MB or {RSS_TOLERANCE_SHARE:.0%} of the
baseline (whichever is larger) above the baseline. Lost: an id whose `addMemory` or
`addMemories` answered, not found afterwards with the content it was given, neither in
its session's hot tier nor by `memory(itemId:)`.

Latency over the whole run (ms, loopback; the windows are in the plot):

| operation | requests | p50 | p99 | max |
|---|---|---|---|---|
{lat_rows}

![soak](bench/results/soak.png)
"""


def _db(r: dict[str, Any]) -> str:
    db = "" if r.get("redis_db") is None else f" --redis-db {r['redis_db']}"
    cache = r.get("search_cache_mb")
    return db + ("" if cache is None else f" --search-cache-mb {cache}")


def _cache(r: dict[str, Any]) -> str:
    cache = r.get("search_cache_mb")
    if cache is None:
        return ""
    return (
        f" The search cache is bounded at {cache} MB (`GRAPHMEM_SEARCH_CACHE_MB`; default"
        " 256): a bounded cache grows with the data until it is full, so a bound the run"
        " fills within its warm-up is what lets the RSS check tell a leak from a cache"
        " still filling."
    )


def _yes(ok: bool | None) -> str:
    return "n/a" if ok is None else ("met" if ok else "**missed**")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--quick", action="store_true", help="about 30 s of load (CI smoke)")
    parser.add_argument("--sample-seconds", type=float, help="default 10 (quick: 5)")
    parser.add_argument("--out", type=Path, help="write JSON here (and the plot beside it)")
    parser.add_argument(
        "--rate", type=float, default=1.0, help="multiply every client's request rate"
    )
    parser.add_argument(
        "--redis-db",
        type=int,
        help="use this database of REDIS_URL's Redis: keeps the soak's sessions away from "
        "other processes on a shared Redis (their maintenance spills every tenant's "
        "over-budget sessions, into whatever Neo4j they use)",
    )
    parser.add_argument(
        "--search-cache-mb",
        type=int,
        help="the server's GRAPHMEM_SEARCH_CACHE_MB (default: the server's own default)",
    )
    args = parser.parse_args()
    seconds = 30.0 if args.quick else 60 * args.minutes
    base = Plan(
        seconds=seconds, sample_seconds=args.sample_seconds or (5.0 if args.quick else 10.0)
    )
    plan = replace(
        base,
        **{
            name: getattr(base, name) / args.rate
            for name in (
                "write_interval",
                "spill_interval",
                "recall_interval",
                "search_interval",
                "churn_interval",
            )
        },
    )
    run_id = uuid.uuid4().hex[:8]
    tenants = [f"soak-{run_id}-{n}" for n in range(plan.tenants)]
    keys = [f"soak-{uuid.uuid4().hex}" for _ in tenants]
    log_dir = Path(tempfile.mkdtemp(prefix="graphmem-soak-"))
    cache = (
        {}
        if args.search_cache_mb is None
        else {"GRAPHMEM_SEARCH_CACHE_MB": str(args.search_cache_mb)}
    )
    server = Server(
        dict(zip(keys, tenants, strict=True)), log_dir / "server.log", args.redis_db, cache
    )
    print(f"server log: {server.log_path}", file=sys.stderr)

    def terminate(*_: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, terminate)
    results: dict[str, Any] = {
        "run": run_info(),
        "quick": args.quick,
        "minutes": seconds / 60,
        "redis_db": args.redis_db,
        "search_cache_mb": args.search_cache_mb,
    }
    try:
        server.start()
        results |= asyncio.run(soak(server, plan, run_id, tenants, keys))
    except KeyboardInterrupt:
        print("interrupted: stopping the server", file=sys.stderr)
        server.stop()
        return 130
    finally:
        code = server.stop()
    problems = server.log_problems()
    errors = sum(results["errors"].values()) + sum(results["verify"]["errors"].values())
    by_code: Counter[str] = Counter()
    for name, n in [*results["errors"].items(), *results["verify"]["errors"].items()]:
        by_code[name.split(": ", 1)[1]] += n
    rss = rss_verdict(results["samples"], results["load_seconds"])
    if args.quick:
        rss["flat"] = None  # warm-up is most of a quick run: RSS is not judged
    v = results["verify"]
    ok = rss["flat"] is not False and errors == 0 and v["lost"] == 0 and v["altered"] == 0
    results["plan"] = {**plan.__dict__, "concurrency": plan.concurrency()}
    results["summary"] = {
        "rss": rss,
        "errors": errors,
        "errors_by_code": dict(by_code),
        "requests": sum(results["requests"].values()),
        "lost": v["lost"],
        "altered": v["altered"],
        "server_exit_code": code,
        "server_log_problems": problems[:20],
        "verdict": (
            ("RSS flat, " if rss["flat"] else "RSS not judged, ") + "0 errors, 0 lost"
            if ok
            else "; ".join(
                part
                for part, bad in (
                    (f"RSS grew {rss.get('growth_mb')} MB", rss["flat"] is False),
                    (f"{errors} errors", errors > 0),
                    (f"{v['lost']} lost", v["lost"] > 0),
                    (f"{v['altered']} altered", v["altered"] > 0),
                )
                if bad
            )
        ),
    }
    summary = results["summary"]
    if v["lost"] and args.redis_db is None:
        print(
            "lost memories: is another graphmem process using this Redis with another Neo4j? "
            "(maintenance spills every tenant's over-budget sessions); try --redis-db",
            file=sys.stderr,
        )
    print(
        json.dumps(
            {k: summary[k] for k in ("verdict", "rss", "errors", "lost", "requests")}, indent=2
        )
    )
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=2) + "\n")
        plot(results, args.out.with_suffix(".png"))
        return 0
    path = save_json("soak", results)
    plot(results, RESULTS / "soak.png")
    print(f"wrote {path} and {RESULTS / 'soak.png'}", file=sys.stderr)
    if not args.quick:
        update_section("soak", report(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
