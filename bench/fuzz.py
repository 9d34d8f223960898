"""Hostile requests against a real ``graphmem serve`` (the generator and its oracle:
``tests/support/fuzzgen.py``, which the fuzz test runs in process too).

Starts a server of its own on 127.0.0.1 (over NEO4J_URI / REDIS_URL), sends ``--count``
requests from a fixed ``--seed`` over every GraphQL operation, the MCP tools and raw-body
attacks (each at least once, then a random stream), stops by itself after ``--seconds``,
and writes ``bench/results/fuzz.json`` (per operation, status and code; reproducers of
every response that broke the oracle) and the fuzz section of BENCHMARKS.md.

    .venv/bin/python -m bench.fuzz [--count 10000] [--seed 1] [--quick] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from bench.lib.loadgen import free_port
from bench.lib.report import ROOT, run_info, save_json, update_section
from bench.lib.server import wait_ready
from tests.support.fuzzgen import Generator, Summary, format_failures, run


async def fuzz(count: int, seed: int, seconds: float, concurrency: int) -> dict[str, Any]:
    tenants = {"a": f"fuzz-a-{uuid.uuid4().hex[:8]}", "b": f"fuzz-b-{uuid.uuid4().hex[:8]}"}
    keys = {name: f"fuzz-{uuid.uuid4().hex}" for name in tenants}
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMEM_")} | {
        "GRAPHMEM_API_KEYS": ",".join(f"{keys[n]}={t}" for n, t in tenants.items()),
        "GRAPHMEM_MAINTENANCE_ENABLED": "false",
        "GRAPHMEM_PORT": str(port),
    }
    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"graphmem-fuzz-{port}.log"
    with log.open("wb") as out:
        server = subprocess.Popen(  # noqa: ASYNC220 - started once, before any load
            [sys.executable, "-m", "graphmem.ops.cli", "serve"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            url = f"http://127.0.0.1:{port}"
            await wait_ready(url, server)
            gen = Generator(seed)
            last = [time.perf_counter()]

            def progress(n: int, s: Summary) -> None:
                if time.perf_counter() - last[0] > 10:
                    last[0] = time.perf_counter()
                    print(f"{n} requests, {s.failure_count} failures", file=sys.stderr)

            async with httpx.AsyncClient(timeout=30) as client:
                summary = await run(
                    client,
                    url,
                    keys,
                    gen,
                    count,
                    seconds=seconds,
                    concurrency=concurrency,
                    keep=200,
                    answer_within=30,
                    first=gen.operations,
                    progress=progress,
                )
            alive = server.poll() is None
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
    missed = sorted(set(gen.operations) - set(summary.per_op))
    if summary.failure_count:
        print(format_failures(summary), file=sys.stderr)
    return {
        "seed": seed,
        "count": count,
        "concurrency": concurrency,
        "server_alive_after": alive,
        "operations": len(gen.operations),
        "operations_missed": missed,
        "server_log_lines": sum(1 for _ in log.open(errors="replace")),
    } | summary.to_json()


def report(r: dict[str, Any]) -> str:
    run_ = r["run"]
    causes = "\n".join(f"| {c} | {n} |" for c, n in r["causes"].items()) or "| none | 0 |"
    codes = ", ".join(f"{c} {n}" for c, n in r["per_code"].items())
    statuses = ", ".join(f"{s}: {n}" for s, n in r["per_status"].items())
    return f"""## Fuzz: hostile requests over every operation

`bench/fuzz.py`, seed {r["seed"]}, {r["requests"]:,} requests in {r["seconds"]} s
({r["requests_per_s"]} req/s, {r["concurrency"]} client(s)) against a real `graphmem serve`:
every Query, Mutation and Subscription field of `schema.graphql`, the four MCP tools and
raw-body attacks ({r["operations"]} operations, each at least once). {run_["date"]}, commit
{run_["commit"]}, {run_["machine"]}.

The oracle: status < 500, every error has a code and none is INTERNAL, no message names
internals (tracebacks, file names, driver or library text, query names).

- HTTP status: {statuses}
- codes: {codes}
- responses that broke the oracle: **{r["failures"]}** (reproducers in
  `bench/results/fuzz.json`); server alive at the end: {r["server_alive_after"]}
- answers slower than {r["slow_seconds"]:g} s (no documented wait is that long):
  **{sum(r["slow"].values())}**{_slow(r)}

| cause | responses |
|---|---|
{causes}
"""


def _slow(r: dict[str, Any]) -> str:
    if not r["slow"]:
        return ""
    return " (" + ", ".join(f"{op} {n}" for op, n in r["slow"].items()) + ")"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=20_260_101)
    parser.add_argument("--seconds", type=float, default=1200, help="stop after this long")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="~200 requests (CI smoke)")
    parser.add_argument("--out", type=Path, help="write JSON here instead of bench/results")
    args = parser.parse_args()
    count, seconds = (200, 120.0) if args.quick else (args.count, args.seconds)
    results = {"run": run_info(), "quick": args.quick} | await fuzz(
        count, args.seed, seconds, args.concurrency
    )
    print(
        f"{results['requests']} requests in {results['seconds']} s, "
        f"{results['failures']} broke the oracle: {json.dumps(results['causes'])}",
        file=sys.stderr,
    )
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))
        return
    save_json("fuzz", results)
    if not args.quick:
        update_section("fuzz", report(results))


if __name__ == "__main__":
    asyncio.run(main())
