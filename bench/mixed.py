"""Tail latency of addMemory under mixed load, and how soon an add is searchable.

Two configurations of a real ``graphmem serve`` on loopback, run one after the other:

- ``inline``: no write-behind; spills embed and extract entities inside the API process
  (threads of the same process, sharing its GIL and cores), and an add waits for the
  spill it starts: how graphmem ran before the enrichment workers.
- ``workers``: the default; one enrichment worker process at a lower CPU priority writes
  every add behind into the graph and embeds it; spills take what it computed and leave
  the rest to it, and an add does not wait for its spill.

For each: the single-client addMemory p50 (closed loop), then ``--seconds`` of mixed load
(16 adders, 4 spillers, 4 recallers on connections of their own), once as closed loops
(saturation) and once per paced rate, reporting add p50/p99 and their ratio to the
single-client p50 (the target: p99 within 10x). With workers, also
the write-to-read latency: the time from an add's acknowledgement until
``search(userId)`` returns it, with adds paced at 10 and at 50/s.

    python -m bench.mixed [--seconds 30] [--quick] [--out FILE]

Writes bench/results/mixed.json and its section of BENCHMARKS.md unless ``--out`` is given.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from bench.lib.documents import ADD, RECALL, SPILL
from bench.lib.locomo import texts_and_questions
from bench.lib.measures import write_to_read
from bench.lib.report import RESULTS, run_info, save_json, update_section
from bench.lib.server import Conn, Server, Stats
from bench.lib.stats import percentile

KEY = "mixed-bench-key-0123456789"


async def single_add_p50(server: Server, texts: list[str], n: int) -> float:
    stats = Stats()
    conn = Conn(server, stats)
    times: list[float] = []
    try:
        for k in range(n):
            started = time.perf_counter()
            await conn.gql(
                "addMemory",
                KEY,
                ADD,
                {"i": {"sessionId": "single", "userId": "solo", "content": random.choice(texts)}},
            )
            if k >= 20:  # after warm-up
                times.append(1000 * (time.perf_counter() - started))
    finally:
        await conn.close()
    return statistics.median(times)


class Pace:
    """When a client sends its requests: ``None`` for a closed loop (the next request as
    soon as the last one answers: the server's throughput at saturation), else a fixed
    rate per client. Paced latency is counted from the time a request was due, not from
    when it went out, so a request held up by a slow one before it counts the wait
    (no coordinated omission)."""

    def __init__(self, per_second: float | None, stop: asyncio.Event) -> None:
        self.interval = None if per_second is None else 1 / per_second
        self.stop = stop
        self.due = time.perf_counter() + random.random() * (self.interval or 0)

    async def next(self) -> float | None:
        """Wait until the next request is due; its due time, or None once stopped."""
        if self.interval is not None:
            delay = self.due - time.perf_counter()
            if delay > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.stop.wait(), delay)
        if self.stop.is_set():
            return None
        due = self.due if self.interval is not None else time.perf_counter()
        self.due = max(self.due + (self.interval or 0), time.perf_counter() - 1)
        return due


async def mixed_load(
    server: Server,
    texts: list[str],
    questions: list[str],
    seconds: float,
    rates: dict[str, float] | None = None,
) -> dict[str, Any]:
    """16 adders, 4 spillers and 4 recallers, each on its own connection: closed loops,
    or paced at ``rates`` (requests per second per client, keyed add/spill/recall)."""
    stats = Stats()
    stop = asyncio.Event()
    adds: list[float] = []
    counts = {"spill": 0, "recall": 0}

    def pace(kind: str) -> Pace:
        return Pace(None if rates is None else rates[kind], stop)

    async def adder(n: int) -> None:
        conn, clock = Conn(server, stats), pace("add")
        try:
            while (due := await clock.next()) is not None:
                data = await conn.gql(
                    "addMemory",
                    KEY,
                    ADD,
                    {
                        "i": {
                            "sessionId": f"mixed-{n}",
                            "userId": f"user-{n % 4}",
                            "content": random.choice(texts),
                        }
                    },
                )
                if data:
                    adds.append(1000 * (time.perf_counter() - due))
        finally:
            await conn.close()

    async def spiller(n: int) -> None:
        conn, clock = Conn(server, stats), pace("spill")
        try:
            while await clock.next() is not None:
                await conn.gql("spill", KEY, SPILL, {"s": f"mixed-{random.randrange(16)}", "n": 8})
                counts["spill"] += 1
        finally:
            await conn.close()

    async def recaller(n: int) -> None:
        conn, clock = Conn(server, stats), pace("recall")
        try:
            while await clock.next() is not None:
                q = {
                    "query": random.choice(questions),
                    "sessionId": f"mixed-{random.randrange(16)}",
                    "userId": f"user-{random.randrange(4)}",
                }
                await conn.gql("recall", KEY, RECALL, {"i": q})
                counts["recall"] += 1
        finally:
            await conn.close()

    tasks = [asyncio.create_task(adder(n)) for n in range(16)]
    tasks += [asyncio.create_task(spiller(n)) for n in range(4)]
    tasks += [asyncio.create_task(recaller(n)) for n in range(4)]
    await asyncio.sleep(seconds)
    stop.set()
    await asyncio.gather(*tasks)
    return {
        "adds": len(adds),
        "add_p50_ms": round(percentile(adds, 0.5), 1),
        "add_p99_ms": round(percentile(adds, 0.99), 1),
        "spills": counts["spill"],
        "recalls": counts["recall"],
        "errors": sum(stats.total_errors.values()),
        "error_examples": stats.error_examples[:5],
    }


async def backlog(server: Server) -> int:
    """The bench tenant's memories still waiting for their enrichment (the `enrichment`
    query; 0 without write-behind)."""
    conn = Conn(server, Stats())
    try:
        data = await conn.gql("enrichment", KEY, "{ enrichment { waiting } }")
    finally:
        await conn.close()
    if data is None:
        raise RuntimeError("the enrichment query failed")
    return int(data["enrichment"]["waiting"])


async def empty_database(url: str) -> None:
    """The bench's own Redis database starts empty: jobs an earlier run left behind would
    be another run's backlog."""
    import redis.asyncio as aioredis

    async with aioredis.Redis.from_url(url) as client:
        await client.flushdb()


#: per-client rates of the paced loads: each adder at these rates (16 adders), each spiller
#: at one spill per 2 s and each recaller at one recall per second (4 of each)
PACED_ADD_RATES = (1.0, 2.5, 5.0)


async def run_config(name: str, env: dict[str, str], args: argparse.Namespace) -> dict[str, Any]:
    texts, questions = texts_and_questions()
    tenant = f"mixed-{uuid.uuid4().hex[:8]}"
    log = RESULTS / f"mixed-{name}.log"
    # the tail is what is measured, not admission control: no rate limit
    env = env | {"GRAPHMEM_RATE_LIMIT_PER_SECOND": "0"}
    server = Server({KEY: tenant}, log, redis_db=args.redis_db, env=env)
    await empty_database(server.redis_url)
    server.start()
    try:
        single = await single_add_p50(server, texts, 120 if args.quick else 400)
        loads = [{"load": "closed", **await mixed_load(server, texts, questions, args.seconds)}]
        for rate in PACED_ADD_RATES:
            await drained(server)
            rates = {"add": rate, "spill": 0.5, "recall": 1.0}
            paced = await mixed_load(server, texts, questions, args.seconds, rates)
            loads.append({"load": f"paced {16 * rate:g} adds/s", **paced})
        for load in loads:
            load["p99_over_single_p50"] = round(load["add_p99_ms"] / single, 1)
        result: dict[str, Any] = {
            "config": name,
            "single_add_p50_ms": round(single, 2),
            "loads": loads,
        }
        if name == "workers":
            result["backlog_after_load"] = await backlog(server)
            result["drain_seconds"] = await drained(server)
            n = 20 if args.quick else 100
            result["write_to_read"] = [
                await write_to_read(server, KEY, texts, rate, n) for rate in (10.0, 50.0)
            ]
        return result
    finally:
        server.stop()


async def drained(server: Server) -> float:
    """Wait until the enrichment backlog of the last load is done; how long it took (so
    that one load's backlog does not weigh on the next measurement)."""
    started = time.monotonic()
    while await backlog(server):  # noqa: ASYNC110 (state in another process)
        await asyncio.sleep(1)
    return round(time.monotonic() - started, 1)


HEADER = (
    "| config | single add p50 ms | load | add p50 ms | add p99 ms | p99/single | adds "
    "| spills | recalls | errors |\n|---|---|---|---|---|---|---|---|---|---|"
)


def report(results: list[dict[str, Any]], seconds: float) -> str:
    rows = "\n".join(
        f"| {r['config']} | {r['single_add_p50_ms']} | {load['load']} | {load['add_p50_ms']} "
        f"| {load['add_p99_ms']} | {load['p99_over_single_p50']}x | {load['adds']:,} "
        f"| {load['spills']:,} | {load['recalls']:,} | {load['errors']} |"
        for r in results
        for load in r["loads"]
    )
    wtr: list[dict[str, Any]] = next(  # the one config that measured it
        (r["write_to_read"] for r in results if r.get("write_to_read")), []
    )
    wtr_rows = "\n".join(
        f"| {w['rate_per_s']:.0f}/s | {w['p50_ms']} | {w['p99_ms']} | "
        f"{w['within_1s']}/{w['adds']} | {w['missed_10s']} |"
        for w in wtr
    )
    return f"""## Tail latency under mixed load, and write-to-read

`python -m bench.mixed --seconds {seconds:g}` (a real `graphmem serve` on loopback, 2 cores,
Neo4j and Redis on the same machine): the single-client `addMemory` p50, then 16 adders,
4 spillers and 4 recallers, each on its own connection, for {seconds:g} s per load:

- `closed`: each client sends its next request as soon as the last one answers. This is
  the server's saturation point, not a latency target: with 16 adders always waiting,
  an add's latency is 16 / throughput whatever the code does (Little's law).
- `paced N adds/s`: each adder at N/16 adds/s, each spiller a spill (8 items) every 2 s,
  each recaller a recall every second. Latency counts from when a request was due, so a
  request held up behind a slow one counts its wait.

`inline` is the old design (no write-behind: spills embed and run NER in the API process,
and an add waits for the spill it starts); `workers` is the default (an enrichment worker
process at nice 10 writes every add behind and embeds; spills take its vectors and leave
the items it has not reached to it; an add returns without waiting for its spill unless
the session is past twice its budget).

{HEADER}
{rows}

Write-to-read with `workers` (adds paced, each with a unique word; the time from the
acknowledgement until `search(userId)` returns it):

| add rate | p50 ms | p99 ms | within 1 s | not found in 10 s |
|---|---|---|---|---|
{wtr_rows}
"""


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--quick", action="store_true", help="a short smoke run")
    parser.add_argument("--redis-db", type=int, default=15)
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an environment setting for both servers (repeatable)",
    )
    parser.add_argument("--configs", default="inline,workers", help="which to run")
    args = parser.parse_args()
    if args.quick:
        args.seconds = min(args.seconds, 5.0)
    RESULTS.mkdir(parents=True, exist_ok=True)
    common = dict(item.split("=", 1) for item in args.set)
    configs = {
        "inline": {"GRAPHMEM_WRITE_BEHIND": "false", "GRAPHMEM_MEMORY__SPILL_WAIT_ABOVE": "1"},
        "workers": {},
    }
    results = [
        await run_config(name, configs[name] | common, args) for name in args.configs.split(",")
    ]
    payload = {"seconds": args.seconds, "results": results}
    if args.out:
        args.out.write_text(json.dumps(payload, indent=2))
        return
    save_json("mixed", {**run_info(), **payload})
    update_section("mixed", report(results, args.seconds))
    print(report(results, args.seconds))


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
