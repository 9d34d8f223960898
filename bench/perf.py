"""Speed on the real stack, with the baselines and limits measured in the same run.

1. component limits: spaCy with the enrichment pipes, and the embedder, each alone;
2. ingest: messages/s through enrichment (embedding + NER + graph writes, one spill),
   against those limits;
3. graph writes: spilled rows written with UNWIND batches against one transaction per
   memory (the naive baseline), on the same rows;
4. ``addMemory`` over HTTP on loopback: p50/p99 at 1, 16 and 64 concurrent clients
   (a bounded number of requests each), with one and two server workers, and where a
   request's CPU goes (cProfile, grouped by package);
5. ``search`` (hybrid) p50/p95 over 10k and 100k stored memories (``bench/lib/corpus.py``),
   scoped to one user and across the tenant, with the time of each stage.

The peer (neo4j-agent-memory) runs in ``bench/peer.py``. Plots go to
``bench/results/perf_*.png``.

    .venv/bin/python -m bench.perf [--quick] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from tqdm import tqdm

from bench.lib import corpus
from bench.lib.loadgen import LoopbackClient, free_port, refused_for_now, retry_after_ms
from bench.lib.locomo import LOCOMO, texts_and_questions, turns
from bench.lib.measures import extractor_throughput, timed_spill, write_to_read
from bench.lib.moments import moment_latency, moments_report
from bench.lib.report import RESULTS, run_info, save_json, update_section
from bench.lib.server import Server, wait_ready
from bench.lib.stats import percentile
from graphmem.domain.models import EmbeddingSpace, MemoryItem, tenant_fulltext
from graphmem.enrich.sentences import embed_memories
from graphmem.memory import Memory, RecallQuery
from graphmem.memory.builder import MemoryBuilder
from graphmem.memory.search.fusion import Retriever
from graphmem.memory.writepath.analysis import graph_memory
from graphmem.settings import Settings, load_settings
from graphmem.stores.models import GraphMemory
from graphmem.stores.neo4j.vectorindex import SHARED_INDEX


def component_limits(texts: list[str], service: Memory) -> dict[str, float]:
    ner = extractor_throughput(texts, repeats=1)
    started = time.perf_counter()
    embed_memories(service.embedder, texts)  # as spill embeds: sentence by sentence
    embed = len(texts) / (time.perf_counter() - started)
    return {"ner_docs_per_s": round(ner, 1), "embed_items_per_s": round(embed, 1)}


async def graph_writes(service: Memory, tenant: str, texts: list[str]) -> dict[str, float]:
    vectors = service.embedder.embed(texts)
    counts = service.tokens.count_many(texts)
    now = time.time_ns()

    def rows(prefix: str) -> list[GraphMemory]:
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
            out.append(graph_memory(item, vector.tolist()))
        return out

    batched, single = rows("b"), rows("s")
    space = EmbeddingSpace.of(service.embedder)
    # A tenant's first write creates its fulltext index (once, ~100 ms): not a write cost.
    await service.graph.upsert(tenant, rows("w")[:1], space)
    started = time.perf_counter()
    for start in range(0, len(batched), 256):
        await service.graph.upsert(tenant, batched[start : start + 256], space)
    unwind = len(batched) / (time.perf_counter() - started)
    started = time.perf_counter()
    for row in single:
        await service.graph.upsert(tenant, [row], space)
    per_item = len(single) / (time.perf_counter() - started)
    return {
        "unwind_rows_per_s": round(unwind, 1),
        "per_item_rows_per_s": round(per_item, 1),
        "ratio": round(unwind / per_item, 1),
    }


async def add_latency(
    url: str, key: str, clients: int, requests: int, tag: str = "load"
) -> dict[str, float]:
    """``requests`` sequential addMemory calls per client, ``clients`` at once, each on
    its own keep-alive connection and in its own session.

    More clients than one process serves in its longest queue wait (``max_wait``) are
    refused with ``RATE_LIMITED``, not queued without end: each client then does what a
    well-behaved one does, waits ``retryAfterMs`` and tries again. A latency runs from
    the first try to the answer that stored the memory; ``refused`` counts the tries
    the server turned away."""
    latencies: list[float] = []
    refused = 0
    query = "mutation($i: AddMemoryInput!) { addMemory(input: $i) { id } }"
    host, port = url.removeprefix("http://").split(":")

    async def client(n: int) -> None:
        nonlocal refused
        async with LoopbackClient(
            host, int(port), "/graphql", {"Authorization": f"Bearer {key}"}
        ) as http:
            for r in range(requests):
                payload = {
                    "query": query,
                    "variables": {
                        "i": {"sessionId": f"{tag}-{n}", "content": f"load test note {n}-{r}"}
                    },
                }
                started = time.perf_counter()
                for _ in range(MAX_TRIES):
                    status, body = await http.post_json(payload)
                    wait = retry_after(status, body)
                    if wait is None:
                        break
                    refused += 1
                    await asyncio.sleep(wait)
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
        "refused": refused,
    }


#: tries of one addMemory before the bench gives up (each refusal waits retryAfterMs)
MAX_TRIES = 20
WRITE_TO_READ_KEY = "perf-wtr-key-0123456789"


def retry_after(status: int, body: bytes) -> float | None:
    """Seconds to wait when the answer is a ``RATE_LIMITED`` refusal, else ``None``."""
    if status != 429:
        return None
    try:
        answer = json.loads(body)
    except ValueError:
        return None
    return retry_after_ms(answer) / 1000 if refused_for_now(answer) else None


class StageClock:
    """Wall time of each search stage: the query embedding, every named Cypher statement
    the graph store runs and the scope-version reads (Redis). Stages run side by side
    (BM25 beside the embedding and the scope's versions), so they overlap."""

    def __init__(self, service: Memory) -> None:
        self.times: dict[str, list[float]] = defaultdict(list)
        self.service = service
        graph: Any = service.graph
        run = graph.run
        # the ranker's query embedder (absent before it had one of its own)
        vectors = getattr(service.ranker, "query_vectors", None)
        self.embedder: Any = vectors.embedder if vectors is not None else service.embedder
        embed = self.embedder.embed
        versions: Any = getattr(service, "versions", None)

        async def timed_run(name: str, params: dict[str, Any], **kw: Any) -> Any:
            started = time.perf_counter()
            try:
                return await run(name, params, **kw)
            finally:
                self.times[name].append(1000 * (time.perf_counter() - started))

        stream = graph.stream

        async def timed_stream(name: str, params: dict[str, Any]) -> Any:
            # from the statement's start to its last record, the caller's work on each
            # page between records included (a whole scope is decoded as it arrives)
            started = time.perf_counter()
            try:
                async for record in stream(name, params):
                    yield record
            finally:
                self.times[name].append(1000 * (time.perf_counter() - started))

        def timed_embed(texts: Any) -> Any:
            started = time.perf_counter()
            try:
                return embed(texts)
            finally:
                self.times["embed query"].append(1000 * (time.perf_counter() - started))

        graph.run, graph.stream = timed_run, timed_stream
        self.embedder.embed = timed_embed
        if versions is not None:
            read = versions.read

            async def timed_read(*args: Any, **kw: Any) -> Any:
                started = time.perf_counter()
                try:
                    return await read(*args, **kw)
                finally:
                    self.times["scope versions (Redis)"].append(
                        1000 * (time.perf_counter() - started)
                    )

            versions.read = timed_read

    def medians(self) -> dict[str, float]:
        return {k: round(statistics.median(v), 1) for k, v in sorted(self.times.items())}

    def close(self) -> None:
        del self.service.graph.run  # type: ignore[attr-defined]
        del self.service.graph.stream  # type: ignore[attr-defined]
        del self.embedder.embed
        versions: Any = getattr(self.service, "versions", None)
        if versions is not None:
            del versions.read


def forget_cached_scopes(service: Memory) -> None:
    """Empty this process's scope cache (absent before the cache existed)."""
    cache = getattr(service.ranker, "cache", None)
    if cache is not None:
        cache.clear()


def forget_query_vectors(service: Memory) -> None:
    """Every measured search embeds its question: the runs repeat the same questions,
    which the ranker's query-vector cache would otherwise answer."""
    vectors = getattr(service.ranker, "query_vectors", None)
    if vectors is not None:
        vectors.clear()


async def timed_searches(
    service: Memory, tenant: str, queries: list[RecallQuery], clients: int = 1
) -> list[float]:
    """Latency of each search, ``clients`` searching at once (each its share in turn)."""
    latencies: list[float] = []

    async def client(mine: list[RecallQuery]) -> None:
        for query in mine:
            started = time.perf_counter()
            await service.recall.search(tenant, query)
            latencies.append(1000 * (time.perf_counter() - started))

    await asyncio.gather(*[client(queries[n::clients]) for n in range(clients)])
    return latencies


async def search_latency(
    service: Memory, sizes: list[int], questions: list[str], repeats: int = 3
) -> list[dict[str, Any]]:
    """Search latency over stored corpora, each figure the median over ``repeats`` runs.

    Workloads, per corpus: ``user`` — the questions spread over 10 users, each user's
    scope searched before (the steady state of an agent asking about one user again and
    again); ``user, first search`` — every question to a user whose scope this process
    has not searched yet (a cold scope cache: what the first search after a restart or
    an eviction pays); ``tenant`` — every question across the whole tenant. Each runs with
    the hybrid and the vector-only retriever, single client; hybrid also with 8 clients
    searching at once."""
    texts = turns()
    embedded = embed_memories(service.embedder, texts)
    out = []
    for size in sizes:
        with tqdm(total=size, desc=f"corpus of {size} memories", file=sys.stderr) as bar:
            started = time.perf_counter()
            tenant, built = await corpus.ensure(service, size, texts, embedded, bar.update)
            build_s = time.perf_counter() - started
        users = corpus.user_ids(size)
        regulars = users[:10]
        scope_size = size // len(users)

        def queries(
            retriever: Retriever,
            scope: str,
            offset: int = 0,
            users: list[str] = users,
            regulars: list[str] = regulars,
        ) -> list[RecallQuery]:
            def user(n: int) -> str | None:
                if scope == "user":
                    return regulars[n % len(regulars)]
                if scope == "user, first search":
                    return users[(n + offset) % len(users)]
                return None

            return [
                RecallQuery(query=q, user_id=user(n), retriever=retriever, limit=10)
                for n, q in enumerate(questions)
            ]

        # warm-up: Neo4j's query plans and page cache, the embedder, the regulars' scopes
        for scope in ("user", "tenant"):
            await timed_searches(service, tenant, queries(Retriever.HYBRID, scope)[:20])
        for retriever in (Retriever.HYBRID, Retriever.VECTOR):
            for scope in ("user", "user, first search", "tenant"):
                levels = (
                    (1, 8)
                    if retriever is Retriever.HYBRID and scope != "user, first search"
                    else (1,)
                )
                for clients in levels:
                    clock = StageClock(service)
                    runs = []
                    for r in range(repeats):
                        if scope == "user, first search":
                            forget_cached_scopes(service)
                        forget_query_vectors(service)
                        batch = queries(retriever, scope, offset=r * len(questions))
                        latencies = await timed_searches(service, tenant, batch, clients)
                        runs.append((statistics.median(latencies), percentile(latencies, 0.95)))
                    clock.close()
                    p50s, p95s = [p for p, _ in runs], [p for _, p in runs]
                    row = {
                        "stored": size,
                        "scope": scope,
                        "retriever": retriever.value,
                        "clients": clients,
                        "scope_size": size if scope == "tenant" else scope_size,
                        "queries": len(questions),
                        "repeats": repeats,
                        "p50_ms": round(statistics.median(p50s), 1),
                        "p95_ms": round(statistics.median(p95s), 1),
                        "p95_range_ms": [round(min(p95s), 1), round(max(p95s), 1)],
                        "stages_p50_ms": clock.medians() if clients == 1 else {},
                        "corpus_built_s": round(build_s, 1) if built else None,
                    }
                    print(f"search: {row}", file=sys.stderr)
                    out.append(row)
        # what a tenant-wide vector search probed: the shared index, or the tenant's own
        _, label = tenant_fulltext(tenant)
        (counts,) = await service.graph.run("memory/index_share", {"label": label})  # type: ignore[attr-defined]
        indexes = service.graph.search.vector_indexes  # type: ignore[attr-defined]
        probed = indexes.current(tenant, service.embedder.dimension).name
        for row in out:
            if row["stored"] == size:
                row["index"] = {
                    "total": int(counts["total"]),
                    "tenant": int(counts["mine"]),
                    "own": probed != SHARED_INDEX,
                }
    return out


@contextmanager
def _profiled() -> Iterator[Any]:
    import cProfile

    profile = cProfile.Profile()
    profile.enable()
    try:
        yield profile
    finally:
        profile.disable()


def _bucket(filename: str, function: str) -> str:
    if "epoll" in function or "select" in function:
        return "waiting for I/O (excluded)"
    for marker, name in (
        ("/graphmem/", "graphmem (service, tiers, API glue)"),
        ("/strawberry/", "GraphQL (strawberry, graphql-core)"),
        ("/graphql/", "GraphQL (strawberry, graphql-core)"),
        ("/starlette/", "HTTP (starlette, ASGI)"),
        ("/httpx/", "test client (excluded)"),
        ("/redis/", "Redis client"),
        ("/pydantic", "pydantic"),
        ("/tokenizers/", "token counting"),
        ("asyncio", "asyncio event loop"),
        ("json", "JSON encoding and decoding"),
        ("uuid", "ids and hashes"),
        ("hashlib", "ids and hashes"),
    ):
        if marker in filename:
            return name
    for marker, name in (
        ("send", "socket calls"),
        ("recv", "socket calls"),
        ("encode_batch", "token counting"),
        ("sha", "ids and hashes"),
        ("uuid", "ids and hashes"),
        ("json", "JSON encoding and decoding"),
        ("isinstance", "isinstance checks (mostly GraphQL)"),
    ):
        if marker in function:
            return name
    return "other (stdlib, builtins)"


async def add_cpu_profile(key: str, tenant: str, requests: int) -> dict[str, float]:
    """CPU time of one addMemory inside the app (in-process, cProfile), by package."""
    import pstats

    from graphmem.api.http.app import create_app

    settings = load_settings(api_keys={key: tenant}, maintenance_enabled=False)
    app = create_app(settings)
    query = "mutation($i: AddMemoryInput!) { addMemory(input: $i) { id } }"
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://perf", headers={"Authorization": f"Bearer {key}"}
        ) as http:

            async def add(n: int) -> None:
                body = {
                    "query": query,
                    "variables": {
                        "i": {"sessionId": f"cpu-{n % 16}", "content": f"profiled note {n}"}
                    },
                }
                response = await http.post("/graphql", json=body)
                assert "errors" not in response.json()

            for n in range(50):
                await add(n)
            with _profiled() as profile:
                for n in range(requests):
                    await add(n)
    stats = pstats.Stats(profile)
    buckets: dict[str, float] = defaultdict(float)
    for (filename, _, function), (_, _, tottime, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        buckets[_bucket(filename, function)] += tottime
    buckets.pop("test client (excluded)", None)
    buckets.pop("waiting for I/O (excluded)", None)
    per_request = {k: round(1000 * v / requests, 3) for k, v in buckets.items()}
    return dict(sorted(per_request.items(), key=lambda kv: -kv[1]))


async def serve_and_load(
    key: str, tenant: str, workers: int, levels: list[tuple[int, int]], repeats: int
) -> list[dict[str, Any]]:
    port = free_port()
    env = dict(os.environ) | {
        "GRAPHMEM_API_KEYS": f"{key}={tenant}",
        "GRAPHMEM_MAINTENANCE_ENABLED": "false",
        "GRAPHMEM_PORT": str(port),
        "GRAPHMEM_WORKERS": str(workers),
        # capacity, not policy: one tenant's load here would pass the per-tenant limit
        "GRAPHMEM_RATE_LIMIT_PER_SECOND": "0",
    }
    server = subprocess.Popen(  # noqa: ASYNC220 - started once, before any load
        [sys.executable, "-m", "graphmem.ops.cli", "serve"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        await wait_ready(url, server)
        await add_latency(url, key, 8, 50, "warm-up")  # connections, caches, workers
        results = []
        for clients, requests in levels:
            # three short runs, each in sessions of its own (no run starts from another's
            # hot tier); the run with the median p50 is reported
            runs = [
                await add_latency(url, key, clients, requests, f"load-w{workers}-c{clients}-{n}")
                for n in range(repeats)
            ]
            result = sorted(runs, key=lambda r: r["p50_ms"])[len(runs) // 2]
            results.append(result | {"workers": workers, "repeats": repeats})
            print(f"addMemory {workers} worker(s), {clients} clients: {result}", file=sys.stderr)
        return results
    finally:
        server.terminate()
        server.wait(timeout=30)


async def write_to_read_run(adds: int) -> list[dict[str, Any]]:
    """Write to read (``bench/lib/measures.py``, as bench/mixed.py measures it) at 10 and 50
    adds/s against ``graphmem serve`` as shipped (write-behind on, one enrichment worker),
    in a Redis database of its own."""
    texts, _ = texts_and_questions()
    server = Server(
        {WRITE_TO_READ_KEY: f"perf-wtr-{uuid.uuid4().hex[:8]}"},
        RESULTS / "perf-write-to-read.log",
        redis_db=14,
        env={"GRAPHMEM_RATE_LIMIT_PER_SECOND": "0", "GRAPHMEM_MAINTENANCE_ENABLED": "false"},
    )
    server.start()
    try:
        # warm-up: the tenant's first writes (fewer in the quick smoke), not measured: on a
        # machine busy with other tests none of them may be found within 10 s; the
        # measured rounds after it still fail the run when no add is found.
        with contextlib.suppress(RuntimeError):
            await write_to_read(server, WRITE_TO_READ_KEY, texts, 5.0, min(5, max(2, adds // 4)))
        return [
            await write_to_read(server, WRITE_TO_READ_KEY, texts, rate, adds)
            for rate in (10.0, 50.0)
        ]
    finally:
        server.stop()


def plots(results: dict[str, Any], folder: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def plot(name: str, lines: list[tuple[str, list[Any], list[Any]]], **axes: Any) -> str:
        """One latency chart: p50 lines solid, p95/p99 dashed, targets as grey rules."""
        targets = axes.pop("targets")
        fig, ax = plt.subplots(figsize=(6, 4))
        for label, x, y in lines:
            median = label.startswith("p50")
            ax.plot(x, y, marker="o" if median else "x", ls="-" if median else "--", label=label)
        for value, style in targets:
            ax.axhline(value, color="grey", lw=0.8, ls=style)
        ax.set(ylabel="ms", **axes)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(folder / name, dpi=110)
        plt.close(fig)
        return name

    add_lines = []
    for workers in sorted({a["workers"] for a in results["add_memory"]}):
        rows = [a for a in results["add_memory"] if a["workers"] == workers]
        for q in ("p50", "p99"):
            add_lines.append(
                (
                    f"{q}, {workers} worker(s)",
                    [a["clients"] for a in rows],
                    [a[f"{q}_ms"] for a in rows],
                )
            )
    return [
        plot(
            "perf_add_latency.png",
            add_lines,
            targets=[(3, "-"), (15, "--")],
            xscale="log",
            yscale="log",
            xlabel="concurrent clients",
            title="addMemory latency over HTTP (targets: p50 3 ms, p99 15 ms)",
        ),
    ]


def search_plot(rows: list[dict[str, Any]], folder: Path) -> str:
    """p50 and p95 of each single-client search workload as bars, the targets as rules."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [r for r in rows if r["clients"] == 1]
    labels = [f"{r['retriever']}\n{r['scope']}" for r in shown]
    x = range(len(shown))
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.bar([i - 0.2 for i in x], [r["p50_ms"] for r in shown], 0.4, label="p50")
    ax.bar([i + 0.2 for i in x], [r["p95_ms"] for r in shown], 0.4, label="p95")
    for value, style in ((25, "-"), (50, "--")):
        ax.axhline(value, color="grey", lw=0.8, ls=style)
    ax.set_xticks(list(x), labels, fontsize=7)
    ax.set(ylabel="ms", title="search latency, 100,000 stored (targets: p50 25 ms, p95 50 ms)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    name = "perf_search_latency.png"
    folder.mkdir(parents=True, exist_ok=True)
    fig.savefig(folder / name, dpi=110)
    plt.close(fig)
    return name


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="tiny inputs (CI smoke)")
    parser.add_argument("--out", type=Path, help="write JSON here instead of bench/results")
    parser.add_argument(
        "--moments-only",
        action="store_true",
        help="only reads at a moment beside current reads (their own section)",
    )
    parser.add_argument(
        "--search-only",
        action="store_true",
        help="only the search latencies (their own section of BENCHMARKS.md, about 5 min)",
    )
    args = parser.parse_args()
    args.search_only = args.search_only or args.moments_only
    quick = args.quick
    texts = turns(80 if quick else 600)
    tenant = f"perf-{uuid.uuid4().hex[:8]}"
    key = f"perf-{uuid.uuid4().hex}"
    settings = load_settings(
        api_keys={key: tenant}, maintenance_enabled=False, memory={"autoSpillEnabled": False}
    )
    service = MemoryBuilder.from_settings(settings).build()
    results: dict[str, Any] = {
        "run": run_info(),
        "quick": quick,
        "embedder": settings.embedder,
    }
    load = [round(os.getloadavg()[0], 1)]
    started = time.perf_counter()

    def step(name: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f}s] {name}", file=sys.stderr)

    try:
        await service.migrate()
        if not args.search_only:
            step("component limits")
            results["limits"] = component_limits(texts, service)
            step("ingest through enrichment")
            results["ingest_messages_per_s"] = round(
                await timed_spill(service, tenant, "perf", texts), 1
            )
            step("graph writes: UNWIND vs per item")
            results["graph_writes"] = await graph_writes(
                service, tenant, texts[: 100 if quick else 400]
            )
        questions = [
            qa["question"]
            for conversation in json.loads(LOCOMO.read_text())
            for qa in conversation["qa"]
        ][::3][: 10 if quick else 100]
        if args.moments_only:
            step("reads at a moment")
            moments = await moments_run(
                service, 1000 if quick else 100_000, questions, 2 if quick else 5
            )
            if args.out:
                args.out.write_text(json.dumps({"moments": moments}, indent=2))
            else:
                save_moments(moments)
            return
        step("search latency")
        results["search"] = await search_latency(
            service, [1000] if quick else [100_000], questions, 1 if quick else 3
        )
        step("reads at a moment")
        results["moments"] = await moments_run(
            service, 1000 if quick else 100_000, questions, 2 if quick else 5
        )
        step("write-to-read through a server and its enrichment worker")
        results["write_to_read"] = await write_to_read_run(8 if quick else 200)
        if not args.search_only:
            step("addMemory CPU profile")
            results["add_cpu_ms"] = await add_cpu_profile(key, tenant, 50 if quick else 500)
            step("addMemory over HTTP")
            levels = [(1, 20), (16, 5), (64, 2)] if quick else [(1, 300), (16, 40), (64, 10)]
            results["add_memory"] = []
            for workers in (1,) if quick else (1, 2):
                results["add_memory"] += await serve_and_load(
                    key, tenant, workers, levels, 1 if quick else 3
                )
            await service.erasure.forget_user(tenant, "perf")
    finally:
        await service.close()
    step("done")
    results["elapsed_s"] = round(time.perf_counter() - started, 1)
    results["load_average"] = [*load, round(os.getloadavg()[0], 1)]
    print(json.dumps(results, indent=2))
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))
        return
    search = {
        "run": results["run"],
        "elapsed_s": results["elapsed_s"],
        "load_average": results["load_average"],
        "search": results["search"],
        "write_to_read": results["write_to_read"],
        "embedder": results["embedder"],
    }
    if settings.embedder != DEFAULT_EMBEDDER:
        # another model's run has a file of its own and a row beside the default's
        save_json(f"perf_search_{settings.embedder}", search)
        update_section("perf-search-models", models_report(RESULTS))
        return
    search["plots"] = [search_plot(results["search"], RESULTS)]
    save_json("perf_search", search)
    save_moments(results["moments"])
    before = RESULTS / "perf_search_before.json"
    update_section(
        "perf-search",
        search_report(search, json.loads(before.read_text()) if before.exists() else None),
    )
    update_section("perf-search-models", models_report(RESULTS))
    if args.search_only:
        return
    results["plots"] = plots(results, save_json("perf", results).parent)
    save_json("perf", results)
    update_section("perf", report(results, len(texts)))


async def moments_run(
    service: Memory, size: int, questions: list[str], rounds: int
) -> dict[str, Any]:
    """Reads at a moment beside current reads (``bench/lib/moments.py``); ``save_moments``
    keeps them (not a smoke run's, which has ``--out``)."""
    tenant = corpus.corpus_tenant(size, service.embedder.name)
    if await corpus.stored(service, size) != size:  # embedding LoCoMo's turns takes minutes
        texts = turns()
        await corpus.ensure(service, size, texts, embed_memories(service.embedder, texts))
    started = time.perf_counter()
    rows, stages = await moment_latency(
        service, tenant, size, questions, timed_searches, forget_query_vectors, StageClock, rounds
    )
    result: dict[str, Any] = {
        "run": run_info(),
        "elapsed_s": round(time.perf_counter() - started, 1),
        "load_average": round(os.getloadavg()[0], 1),
        "moments": rows,
        "superseded_ms": stages,
    }
    return result


def save_moments(result: dict[str, Any]) -> None:
    """bench/results/perf_moments.json and its section of BENCHMARKS.md."""
    save_json("perf_moments", result)
    update_section(
        "perf-moments", moments_report(result["moments"], result["run"], result["superseded_ms"])
    )


def report(r: dict[str, Any], ingested: int) -> str:
    run, lim = r["run"], r["limits"]
    limit = min(lim["ner_docs_per_s"], lim["embed_items_per_s"])
    share = 100 * r["ingest_messages_per_s"] / limit
    w = r["graph_writes"]
    add_rows = "\n".join(
        f"| addMemory over HTTP, {a['clients']} clients, {a['workers']} worker(s) "
        f"| p50 {a['p50_ms']} ms, p99 {a['p99_ms']} ms, {a['requests_per_s']} req/s "
        f"({a['requests']} requests, {a.get('refused', 0)} tries refused and retried; "
        f"median run of {a['repeats']}) | {_add_verdict(a)} |"
        for a in r["add_memory"]
    )
    cpu = r["add_cpu_ms"]
    cpu_total = sum(cpu.values())
    cpu_rows = "\n".join(f"| {k} | {v:.3f} |" for k, v in cpu.items())
    return f"""## Speed: ingest, writes, addMemory

`bench/perf.py` ({r["elapsed_s"]:.0f} s), {ingested} LoCoMo turns for ingest, services on the
same 2-core machine. {run["date"]}, commit {run["commit"]}, {run["machine"]}.

| measurement | result | target |
|---|---|---|
| spaCy alone (NER; the parse only for texts with two or more entities) \
| {lim["ner_docs_per_s"]} docs/s | component limit |
| embedder alone (memories embedded sentence by sentence, as spill does) \
| {lim["embed_items_per_s"]} memories/s | component limit |
| ingest through enrichment (spill: embedding beside NER, graph writes pipelined) \
| {r["ingest_messages_per_s"]} messages/s ({share:.0f}% of the slower component) \
| ≥ 200/s and ≥ 70%: {_ingest_verdict(r["ingest_messages_per_s"], share)} |
| graph writes, UNWIND batches of 256 | {w["unwind_rows_per_s"]} rows/s | |
| graph writes, one transaction per memory | {w["per_item_rows_per_s"]} rows/s | |
| UNWIND / per-item | {w["ratio"]} times | ≥ 10 times: {"met" if w["ratio"] >= 10 else "missed"} |
{add_rows}

Search latencies are in their own section (below), written by this run too.

![addMemory latency](bench/results/perf_add_latency.png)

### Where the missed targets lose their time

- **Ingest** ({r["ingest_messages_per_s"]} messages/s against ≥ 200): enrichment cannot run
  faster than its slower component, and both components share the two cores with each
  other and with Neo4j. The embedder ({lim["embed_items_per_s"]} memories/s alone) is the
  slower one since memories are embedded sentence by sentence (about 1.4 times the work
  of one vector per turn, for +0.03 to +0.04 recall; `bench/embedders.py` has the model
  choice). NER runs first on every text and the parser only where two entities could be
  related, which brought spaCy from 176 to {lim["ner_docs_per_s"]} docs/s. Spill batches are
  pipelined (the next batch is embedded while the last is written).
- **addMemory at 16 clients**: one request costs about 1.2 ms of CPU in one worker
  process (the profile below: GraphQL execution, JSON, the Redis client and the event
  loop; parsing and validation are cached per query text). At 16 concurrent clients the
  requests queue for the cores: p50 ≈ clients / throughput. p50 ≤ 3 ms at 16 clients
  needs more than 5,000 requests/s, about 0.2 ms of CPU per request on two cores that
  the load generator shares. Two workers (`graphmem serve --workers 2`) raise throughput;
  the single-client p50 is the request's own latency.

Where an addMemory's CPU goes, in process (cProfile, ms per request, {cpu_total:.2f} ms in all;
profiling roughly doubles Python's own cost, so read shares, not totals):

| package | ms |
|---|---|
{cpu_rows}
"""


def _add_verdict(a: dict[str, Any]) -> str:
    if a["clients"] != 16:
        return ""
    ok = a["p50_ms"] <= 3 and a["p99_ms"] <= 15
    return "p50 ≤ 3 ms, p99 ≤ 15 ms: " + ("met" if ok else "missed")


#: the model the search section is measured with (Settings.embedder's default)
DEFAULT_EMBEDDER = Settings.model_fields["embedder"].default


def models_report(results: Path) -> str:
    """The single-client search latencies at 100,000 stored and write-to-read of every
    model measured (``perf_search.json`` for the default, ``perf_search_<model>.json``
    for the others: `GRAPHMEM_EMBEDDER=<model> python -m bench.perf --search-only`)."""
    runs = [json.loads((results / "perf_search.json").read_text())] + [
        json.loads(p.read_text())
        for p in sorted(results.glob("perf_search_*.json"))
        if p.name != "perf_search_before.json"
    ]
    runs = [r for r in runs if r.get("search")]
    names = [r.get("embedder", DEFAULT_EMBEDDER) for r in runs]
    keys = [
        (s["retriever"], s["scope"])
        for s in runs[0]["search"]
        if s["clients"] == 1 and s["stored"] == 100_000
    ]

    def cell(run: dict[str, Any], retriever: str, scope: str) -> str:
        row = next(
            (
                s
                for s in run["search"]
                if (s["retriever"], s["scope"], s["clients"], s["stored"])
                == (retriever, scope, 1, 100_000)
            ),
            None,
        )
        if row is None:
            return ""
        verdict = _search_verdict(row)  # "<target>: met" or "<target>: missed"
        mark = f" ({verdict.rsplit(': ', 1)[1]})" if verdict else ""
        return f"{row['p50_ms']} / {row['p95_ms']}{mark}"

    def write_to_read(run: dict[str, Any]) -> str:
        at50 = next((w for w in run.get("write_to_read", []) if w["rate_per_s"] == 50), None)
        return f"{at50['p50_ms']} / {at50['p99_ms']}" if at50 else ""

    head = " | ".join(f"`{n}`" for n in names)
    rows = "\n".join(
        f"| {retriever} | {scope} | " + " | ".join(cell(r, retriever, scope) for r in runs) + " |"
        for retriever, scope in keys
    )
    when = "; ".join(
        f"`{n}` {r['run']['date']}, {r['run']['commit']}" for n, r in zip(names, runs, strict=True)
    )
    return f"""### Search latency by model

The single-client rows above, for each model `GRAPHMEM_EMBEDDER` can name that was
measured (`GRAPHMEM_EMBEDDER=<model> .venv/bin/python -m bench.perf --search-only`; a
model other than the default writes `bench/results/perf_search_<model>.json` and this
table, not the section above). Each model searches a corpus of its own (a tenant holds
one model's vectors): the same 100,000 LoCoMo-based memories, embedded by that model.
p50 / p95 ms; the target is hybrid p50 ≤ 25 ms and p95 ≤ 50 ms. Runs: {when}.

| retriever | scope | {head} |
|---|---|{"---|" * len(names)}
{rows}
| write-to-read at 50 adds/s, p50 / p99 ms | | {" | ".join(write_to_read(r) for r in runs)} |
"""


def _search_verdict(s: dict[str, Any]) -> str:
    if s["stored"] < 100_000 or s["retriever"] != "hybrid" or s["clients"] != 1:
        return ""
    ok = s["p50_ms"] <= 25 and s["p95_ms"] <= 50
    return "p50 ≤ 25 ms, p95 ≤ 50 ms: " + ("met" if ok else "missed")


def _index_note(row: dict[str, Any]) -> str:
    index = row.get("index")
    if not index:
        return ""
    if index.get("own"):
        return (
            f"A tenant-wide vector search of this tenant goes through its own vector index "
            f"({index['tenant']:,} memories; the index every tenant shares held "
            f"{index['total']:,}), so its probes see only its memories "
            "([recall.md](docs/recall.md#tenant-scope))."
        )
    return (
        f"A tenant-wide vector search goes through Neo4j's one vector index, shared by every "
        f"tenant: in this run it held {index['total']:,} memories, {index['tenant']:,} of them "
        "this tenant's. Near a LoCoMo question, other tenants' copies of the same texts (the "
        "test suite's, on a development stack) can fill the first probe, and the wider "
        "second probe is what the tenant rows pay ([recall.md](docs/recall.md#tenant-scope))."
    )


def search_report(r: dict[str, Any], before: dict[str, Any] | None = None) -> str:
    """The search section; ``before`` (bench/results/perf_search_before.json) is the same
    program's run on the read path this one replaced, shown beside it."""
    run = r["run"]
    earlier = {
        (s["retriever"], s["scope"], s["clients"]): s for s in (before or {}).get("search", [])
    }

    def was(s: dict[str, Any]) -> str:
        b = earlier.get((s["retriever"], s["scope"], s["clients"]))
        return f"{b['p50_ms']} / {b['p95_ms']}" if b else ""

    rows = "\n".join(
        f"| {s['retriever']} | {s['scope']} ({s['scope_size']:,}) | {s['clients']} "
        f"| {s['p50_ms']} | {s['p95_ms']} ({s['p95_range_ms'][0]} to {s['p95_range_ms'][1]}) "
        f"| {was(s)} | {_search_verdict(s)} |"
        for s in r["search"]
    )
    then = (
        f"The before column is the same program on the read path this one replaced, commit "
        f"{before['run']['commit']}, {before['run']['date']}, on the same stack: "
        f"{before.get('note', '')}"
        if before
        else ""
    )
    stages = "\n".join(
        f"| {s['retriever']} / {s['scope']} | "
        + ", ".join(f"{k} {v}" for k, v in s["stages_p50_ms"].items())
        + " |"
        for s in r["search"]
        if s["stages_p50_ms"]
    )
    wtr = "\n".join(
        f"| {w['rate_per_s']:.0f}/s | {w['adds']} | {w['p50_ms']} | {w['p99_ms']} "
        f"| {w['within_1s']} | {w['missed_10s']} |"
        for w in r.get("write_to_read", [])
    )
    first = r["search"][0]
    load = " and ".join(str(x) for x in r.get("load_average", ["unknown"]))
    return f"""## Speed: search and recall latency

`bench/perf.py --search-only` ({r["elapsed_s"]:.0f} s; the full run writes this section
too), {first["stored"]:,} memories stored (`bench/lib/corpus.py`: 100 users of 10 sessions of
100 turns), {first["queries"]} LoCoMo questions per run, `limit: 10`, each figure the median
over {first["repeats"]} runs (the p95 range across runs in brackets). Services on the same
2-core machine, shared with other work (one-minute load average {load} at the start and
the end of the run): single figures move by several ms from run to run, and every stage
waits for the cores. {run["date"]}, commit {run["commit"]}, {run["machine"]}.

Workloads: **user** — the questions spread over 10 users whose scopes were searched
before (an agent asking about the same user again); **user, first search** — each
question to a user this process has not searched yet, so the search also builds the
scope's cache entry; **tenant** — across all {first["stored"]:,} memories.
{_index_note(first)}

{then}

| retriever | scope (memories) | clients | p50 ms | p95 ms (range) | before: p50 / p95 ms | target |
|---|---|---|---|---|---|---|
{rows}

![search latency](bench/results/perf_search_latency.png)

Where a single-client search's time goes (median ms per call of each stage, so a stage
that runs only on some searches, such as reading a scope whole on its first search,
shows what that costs when it runs; a search served from its scope's view computes
BM25 in the view, while a tenant-wide one asks Lucene beside the query embedding, and on
two cores the two compete for CPU):

| retriever / scope | stages |
|---|---|
{stages}

Write-to-read (`write_to_read` of bench/lib/measures.py against `graphmem serve` with its enrichment
worker): adds paced at a rate, each with a word of its own; the time from the add's
acknowledgement until `search(userId)` returns it.

| add rate | adds | p50 ms | p99 ms | within 1 s | not found in 10 s |
|---|---|---|---|---|---|
{wtr}
"""


def _ingest_verdict(rate: float, share: float) -> str:
    return "met" if rate >= 200 and share >= 70 else "missed"


if __name__ == "__main__":
    asyncio.run(main())
