"""Speed on the real stack, with the baselines and limits measured in the same run.

1. component limits: spaCy with the enrichment pipes, and the embedder, each alone;
2. ingest: messages/s through enrichment (embedding + NER + graph writes, one spill),
   against those limits;
3. graph writes: spilled rows written with UNWIND batches against one transaction per
   memory (the naive baseline), on the same rows;
4. ``addMemory`` over HTTP on loopback: p50/p99 at 1, 16 and 64 concurrent clients
   (a bounded number of requests each);
5. ``search`` (hybrid) p50/p95 with 10,000 stored memories.

Not yet here: search at 100k memories and the neo4j-agent-memory peer (issue 5).

    .venv/bin/python -m bench.perf [--quick] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from bench.entities import turns
from bench.loadgen import LoopbackClient
from bench.report import run_info, save_json, update_section
from graphmem.builder import MemoryBuilder
from graphmem.enrich.ner import load_nlp
from graphmem.models import MemoryItem
from graphmem.service import MemoryService, RecallQuery
from graphmem.settings import load_settings


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def wait_ready(url: str, server: subprocess.Popen[bytes], seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    async with httpx.AsyncClient() as http:
        while time.monotonic() < deadline:
            if server.poll() is not None:
                raise RuntimeError("graphmem serve exited")
            try:
                if (await http.get(f"{url}/readyz", timeout=1)).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.2)
    raise RuntimeError("graphmem serve did not become ready")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def component_limits(texts: list[str], service: MemoryService) -> dict[str, float]:
    nlp = load_nlp()
    started = time.perf_counter()
    for _ in nlp.pipe(texts, batch_size=64):
        pass
    ner = len(texts) / (time.perf_counter() - started)
    started = time.perf_counter()
    service.embedder.embed(texts)
    embed = len(texts) / (time.perf_counter() - started)
    return {"ner_docs_per_s": round(ner, 1), "embed_items_per_s": round(embed, 1)}


async def ingest(service: MemoryService, tenant: str, texts: list[str]) -> float:
    for start in range(0, len(texts), 500):
        await service.add_many(
            tenant,
            [
                {"session_id": "ingest", "user_id": "perf", "content": t}
                for t in texts[start : start + 500]
            ],
        )
    started = time.perf_counter()
    await service.spill(tenant, "ingest", count=len(texts))
    return len(texts) / (time.perf_counter() - started)


async def graph_writes(service: MemoryService, tenant: str, texts: list[str]) -> dict[str, float]:
    vectors = service.embedder.embed(texts)
    counts = service.tokens.count_many(texts)
    now = time.time_ns()

    def rows(prefix: str) -> list[dict[str, Any]]:
        out = []
        for n, (text, vector, tokens) in enumerate(zip(texts, vectors, counts, strict=True)):
            item = MemoryItem.model_validate(
                {
                    "id": f"{prefix}{n}",
                    "tenant": tenant,
                    "session_id": "writes",
                    "user_id": "perf",
                    "content": text,
                    "type": "message",
                    "tier": "cold",
                    "last_accessed_at": "2026-01-01T00:00:00+00:00",
                    "created_at": "2026-01-01T00:00:00+00:00",
                    "token_count": tokens,
                    "content_hash": str(n),
                    "seq": now + n,
                }
            )
            out.append(item.graph_row(vector.tolist()))
        return out

    batched, single = rows("b"), rows("s")
    started = time.perf_counter()
    for start in range(0, len(batched), 256):
        await service.graph.upsert(tenant, batched[start : start + 256])
    unwind = len(batched) / (time.perf_counter() - started)
    started = time.perf_counter()
    for row in single:
        await service.graph.upsert(tenant, [row])
    per_item = len(single) / (time.perf_counter() - started)
    return {
        "unwind_rows_per_s": round(unwind, 1),
        "per_item_rows_per_s": round(per_item, 1),
        "ratio": round(unwind / per_item, 1),
    }


async def add_latency(url: str, key: str, clients: int, requests: int) -> dict[str, float]:
    """``requests`` sequential addMemory calls per client, ``clients`` at once, each on
    its own keep-alive connection and in its own session."""
    latencies: list[float] = []
    query = "mutation($i: AddMemoryInput!) { addMemory(input: $i) { id } }"
    host, port = url.removeprefix("http://").split(":")

    async def client(n: int) -> None:
        async with LoopbackClient(
            host, int(port), "/graphql", {"Authorization": f"Bearer {key}"}
        ) as http:
            for r in range(requests):
                payload = {
                    "query": query,
                    "variables": {
                        "i": {"sessionId": f"load-{n}", "content": f"load test note {n}-{r}"}
                    },
                }
                started = time.perf_counter()
                status, body = await http.post_json(payload)
                latencies.append(1000 * (time.perf_counter() - started))
                if status != 200 or b'"errors"' in body:
                    raise RuntimeError(f"addMemory failed: {status} {body[:200]!r}")

    started = time.perf_counter()
    await asyncio.gather(*[client(n) for n in range(clients)])
    elapsed = time.perf_counter() - started
    return {
        "clients": clients,
        "requests": len(latencies),
        "p50_ms": round(statistics.median(latencies), 2),
        "p99_ms": round(percentile(latencies, 0.99), 2),
        "requests_per_s": round(len(latencies) / elapsed, 1),
    }


async def search_latency(
    service: MemoryService, tenant: str, stored: int, questions: list[str]
) -> dict[str, float]:
    texts = turns()
    filler = [f"{texts[n % len(texts)]} (note {n})" for n in range(stored)]
    for start in range(0, len(filler), 500):
        await service.add_many(
            tenant,
            [
                {"session_id": f"bulk-{start // 2000}", "user_id": "perf-bulk", "content": t}
                for t in filler[start : start + 500]
            ],
        )
    for s in range(0, (stored + 1999) // 2000):
        await service.spill(tenant, f"bulk-{s}", count=2000)
    latencies = []
    for question in questions:
        started = time.perf_counter()
        await service.search(tenant, RecallQuery(query=question, user_id="perf-bulk", limit=10))
        latencies.append(1000 * (time.perf_counter() - started))
    return {
        "stored": stored,
        "queries": len(latencies),
        "p50_ms": round(statistics.median(latencies), 1),
        "p95_ms": round(percentile(latencies, 0.95), 1),
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny inputs (CI smoke)")
    parser.add_argument("--out", type=Path, help="write JSON here instead of bench/results")
    args = parser.parse_args()
    quick = args.quick
    texts = turns(80 if quick else 600)
    tenant = f"perf-{uuid.uuid4().hex[:8]}"
    key = f"perf-{uuid.uuid4().hex}"
    settings = load_settings(
        api_keys={key: tenant}, maintenance_enabled=False, memory={"autoSpillEnabled": False}
    )
    service = MemoryBuilder.from_settings(settings).build()
    results: dict[str, Any] = {"run": run_info(), "quick": quick}
    try:
        await service.migrate()
        results["limits"] = component_limits(texts, service)
        results["ingest_messages_per_s"] = round(await ingest(service, tenant, texts), 1)
        results["graph_writes"] = await graph_writes(
            service, tenant, texts[: 100 if quick else 400]
        )
        questions = [t for t in turns()[::7]][: 10 if quick else 100]
        results["search"] = await search_latency(
            service, tenant, 300 if quick else 10_000, questions
        )
        port = free_port()
        env = dict(os.environ) | {
            "GRAPHMEM_API_KEYS": f"{key}={tenant}",
            "GRAPHMEM_MAINTENANCE_ENABLED": "false",
            "GRAPHMEM_PORT": str(port),
        }
        server = subprocess.Popen(  # noqa: ASYNC220 - started once, before any load
            [sys.executable, "-m", "graphmem.cli", "serve"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            url = f"http://127.0.0.1:{port}"
            await wait_ready(url, server)
            await add_latency(url, key, 4, 5)  # warm-up
            results["add_memory"] = [
                await add_latency(url, key, clients, requests)
                for clients, requests in (
                    (1, 20 if quick else 300),
                    (16, 5 if quick else 40),
                    (64, 2 if quick else 10),
                )
            ]
        finally:
            server.terminate()
            server.wait(timeout=30)
        await service.forget_user(tenant, "perf")
        await service.forget_user(tenant, "perf-bulk")
    finally:
        await service.close()
    print(json.dumps(results, indent=2))
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))
        return
    save_json("perf", results)
    r, run = results, results["run"]
    lim = r["limits"]
    limit = min(lim["ner_docs_per_s"], lim["embed_items_per_s"])
    rows = "\n".join(
        f"| addMemory over HTTP, {a['clients']} clients | p50 {a['p50_ms']} ms, "
        f"p99 {a['p99_ms']} ms ({a['requests']} requests) | p50 ≤ 3 ms, p99 ≤ 15 ms "
        "at 16 |"
        for a in r["add_memory"]
    )
    share = 100 * r["ingest_messages_per_s"] / limit
    w, found = r["graph_writes"], r["search"]
    update_section(
        "perf",
        f"""## Speed: ingest, writes, addMemory, search

`bench/perf.py`, {len(texts)} LoCoMo turns for ingest, services on the same 2-core machine.
{run["date"]}, commit {run["commit"]}, {run["machine"]}.

| measurement | result | target |
|---|---|---|
| spaCy alone (enrichment pipes) | {lim["ner_docs_per_s"]} docs/s | component limit |
| embedder alone | {lim["embed_items_per_s"]} items/s | component limit |
| ingest through enrichment (one spill: embedding beside NER, graph writes) \
| {r["ingest_messages_per_s"]} messages/s ({share:.0f}% of the slower component) \
| ≥ 200/s and ≥ 70% |
| graph writes, UNWIND batches of 256 | {w["unwind_rows_per_s"]} rows/s | |
| graph writes, one transaction per memory | {w["per_item_rows_per_s"]} rows/s | |
| UNWIND / per-item | {w["ratio"]} times | ≥ 10 times |
{rows}
| hybrid search, {found["stored"]} memories \
| p50 {found["p50_ms"]} ms, p95 {found["p95_ms"]} ms | p95 ≤ 50 ms at 100k |

Not measured yet: search at 100k memories, and neo4j-agent-memory as the peer.""",
    )


if __name__ == "__main__":
    asyncio.run(main())
