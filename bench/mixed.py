"""Tail latency of addMemory under mixed load, and how soon an add is searchable.

Two configurations of a real ``graphmem serve`` on loopback, run one after the other:

- ``inline``: no write-behind; spills embed and extract entities inside the API process
  (threads of the same process, sharing its GIL and cores): how graphmem ran before the
  enrichment workers.
- ``workers``: the default; one enrichment worker process at a lower CPU priority writes
  every add behind into the graph, and spills reuse what it computed.

For each: the single-client addMemory p50 (closed loop), then ``--seconds`` of mixed load
(16 adders, 4 spillers, 4 recallers, each a closed loop on its own connection), reporting
add p50/p99 and their ratio to the single-client p50 (the hardening issue's target: p99
within 10x). With workers, also the write-to-read latency: the time from an add's
acknowledgement until ``search(userId)`` returns it, with adds paced at 10 and at 50/s.

    python -m bench.mixed [--seconds 30] [--quick] [--out FILE]

Writes bench/results/mixed.json and its section of BENCHMARKS.md unless ``--out`` is given.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

from bench.report import run_info, save_json, update_section
from bench.soak import ADD, RECALL, SPILL, Conn, Server, Stats, corpus, percentile

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"  # the servers' logs
SEARCH = """query($q: String!, $u: ID) { search(query: $q, userId: $u, limit: 10) {
  item { id } } }"""
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


async def mixed_load(
    server: Server, texts: list[str], questions: list[str], seconds: float
) -> dict[str, Any]:
    stats = Stats()
    stop = asyncio.Event()
    adds: list[float] = []
    counts = {"spill": 0, "recall": 0}

    async def adder(n: int) -> None:
        conn = Conn(server, stats)
        try:
            while not stop.is_set():
                started = time.perf_counter()
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
                    adds.append(1000 * (time.perf_counter() - started))
        finally:
            await conn.close()

    async def spiller(n: int) -> None:
        conn = Conn(server, stats)
        try:
            while not stop.is_set():
                await conn.gql("spill", KEY, SPILL, {"s": f"mixed-{random.randrange(16)}", "n": 8})
                counts["spill"] += 1
        finally:
            await conn.close()

    async def recaller(n: int) -> None:
        conn = Conn(server, stats)
        try:
            while not stop.is_set():
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


async def write_to_read(server: Server, texts: list[str], rate: float, n: int) -> dict[str, Any]:
    """Adds paced at ``rate``/s, each with a word of its own; per add, the time from its
    acknowledgement until a search of the user's scope returns it."""
    stats = Stats()
    reader = Conn(server, stats)
    delays: list[float] = []
    missed = 0
    user = f"wtr-{uuid.uuid4().hex[:8]}"
    try:
        for _ in range(n):
            tag = f"zq{uuid.uuid4().hex[:10]}"
            started = time.monotonic()
            # a connection per add: an idle keep-alive one would be closed while polling
            writer = Conn(server, stats)
            data = await writer.gql(
                "addMemory",
                KEY,
                ADD,
                {
                    "i": {
                        "sessionId": f"{user}-s",
                        "userId": user,
                        "content": f"{random.choice(texts)} {tag}",
                    }
                },
            )
            acked = time.monotonic()
            await writer.close()
            item = (data or {}).get("addMemory", {}).get("id")
            while item is not None:
                found = await reader.gql("search", KEY, SEARCH, {"q": tag, "u": user})
                hits = {h["item"]["id"] for h in (found or {}).get("search", [])}
                if item in hits:
                    delays.append(1000 * (time.monotonic() - acked))
                    break
                if time.monotonic() - acked > 10:
                    missed += 1
                    break
            rest = 1 / rate - (time.monotonic() - started)
            if rest > 0:
                await asyncio.sleep(rest)
    finally:
        await reader.close()
    if not delays:
        raise RuntimeError(f"no add became searchable: {stats.error_examples[:3]}")
    return {
        "rate_per_s": rate,
        "adds": n,
        "p50_ms": round(percentile(delays, 0.5), 1),
        "p99_ms": round(percentile(delays, 0.99), 1),
        "within_1s": sum(d <= 1000 for d in delays),
        "missed_10s": missed,
    }


async def backlog(server: Server) -> int:
    """Write-behind jobs not yet done, read from the server's Redis."""
    import redis.asyncio as aioredis

    async with aioredis.Redis.from_url(server.redis_url) as client:
        return int(await client.xlen("gm:enrich"))


async def run_config(name: str, env: dict[str, str], args: argparse.Namespace) -> dict[str, Any]:
    texts, questions = corpus()
    tenant = f"mixed-{uuid.uuid4().hex[:8]}"
    log = RESULTS / f"mixed-{name}.log"
    # the tail is what is measured, not admission control: no rate limit
    env = env | {"GRAPHMEM_RATE_LIMIT_PER_SECOND": "0"}
    server = Server({KEY: tenant}, log, redis_db=args.redis_db, env=env)
    server.start()
    try:
        single = await single_add_p50(server, texts, 120 if args.quick else 400)
        load = await mixed_load(server, texts, questions, args.seconds)
        result: dict[str, Any] = {
            "config": name,
            "single_add_p50_ms": round(single, 2),
            **load,
            "p99_over_single_p50": round(load["add_p99_ms"] / single, 1),
        }
        if name == "workers-nowait":
            result["backlog_after_load"] = await backlog(server)
            # the mixed load's backlog drains first, so the figures are for these rates
            started = time.monotonic()
            while await backlog(server):  # noqa: ASYNC110 (state in another process)
                await asyncio.sleep(1)
            result["drain_seconds"] = round(time.monotonic() - started, 1)
            n = 20 if args.quick else 100
            result["write_to_read"] = [
                await write_to_read(server, texts, rate, n) for rate in (10.0, 50.0)
            ]
        return result
    finally:
        server.stop()


def report(results: list[dict[str, Any]], seconds: float) -> str:
    rows = "\n".join(
        f"| {r['config']} | {r['single_add_p50_ms']} | {r['add_p50_ms']} | {r['add_p99_ms']} "
        f"| {r['p99_over_single_p50']}x | {r['adds']:,} | {r['spills']:,} | {r['recalls']:,} |"
        for r in results
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
4 spillers and 4 recallers, each a closed loop, for {seconds:g} s. `inline` is the old
design (spills embed and run NER inside the API process); `workers` is the default (one
enrichment worker process at nice 10 writes every add behind; spills reuse its work);
`workers-nowait` also sets `spillWaitSeconds` to 0, so an add that starts a spill
returns without waiting for it (the default waits up to 5 s, which is what the p99 of
the first two shows).

| config | single add p50 ms | mixed p50 ms | mixed p99 ms | p99/single | adds | spills | recalls |
|---|---|---|---|---|---|---|---|
{rows}

Write-to-read with `workers-nowait` (adds paced, each with a unique word; the time from the
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
    parser.add_argument("--configs", default="inline,workers,workers-nowait", help="which to run")
    args = parser.parse_args()
    if args.quick:
        args.seconds = min(args.seconds, 5.0)
    RESULTS.mkdir(parents=True, exist_ok=True)
    common = dict(item.split("=", 1) for item in args.set)
    configs = {
        "inline": {"GRAPHMEM_WRITE_BEHIND": "false"},
        "workers": {},
        "workers-nowait": {"GRAPHMEM_MEMORY__SPILL_WAIT_SECONDS": "0"},
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
