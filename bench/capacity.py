"""Capacity: the bytes a memory costs in Neo4j (store files, each index) and in Redis (a
hot item), measured on fresh databases this program starts with the project's launcher,
so nothing else shares the store. ``docs/scaling.md`` builds its model on these figures.

Neo4j: ``--memories`` memories (default 100,000) written as spill writes them
(``bench/lib/corpus.py``: LoCoMo turns, real MiniLM vectors mixed per memory, sentence
vectors, and the entity mentions spaCy finds in each turn); the database directory is
measured after a checkpoint, before and after, by file family and by index. The tenant's
own vector index (created for tenants past 20,000 memories, docs/recall.md) is measured
on top, as the extra a large tenant pays.

Redis: ``--hot`` items added through the ingest path into sessions of 100 (no worker
runs, so the enrichment stream still holds their jobs), then what a worker leaves in the
hot tier for each (vector and sentence vectors); ``used_memory`` and the append-only
file measured before and after each step.

    .venv/bin/python -m bench.capacity [--memories N] [--hot N] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tqdm import tqdm

from bench.lib import corpus
from bench.lib.loadgen import free_port
from bench.lib.locomo import turns
from bench.lib.report import RESULTS, ROOT, publish, run_info
from graphmem.domain.models import MemoryItem
from graphmem.enrich.sentences import Embedded, embed_memories, pack
from graphmem.memory import Memory
from graphmem.memory.builder import MemoryBuilder
from graphmem.ops.devstack import LocalStack
from graphmem.settings import Settings
from graphmem.stores.models import Enriched
from graphmem.stores.redis.queue import STREAM

PASSWORD = "capacity-bench"


def directory_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0


async def neo4j_files(service: Memory, stack: LocalStack, database: Path) -> dict[str, int]:
    """The database directory's bytes by family: store files, each index (by name), and
    the rest, measured with Neo4j stopped (a clean stop checkpoints: the store files then
    hold everything). Index directories are named by index id; SHOW INDEXES maps them."""
    names = {
        str(r["id"]): f"index {r['name']} ({r['type'].lower()})"
        for r in await service.graph.run("admin/index_ids", {})
    }
    stack.neo4j.stop()
    out = _families(database, names)
    stack.neo4j.start()
    return out


def _families(database: Path, names: dict[str, str]) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for f in database.rglob("*"):
        if not f.is_file():
            continue
        parts = f.relative_to(database).parts
        if parts[0] == "schema" and len(parts) > 3 and parts[1] == "index":
            family = names.get(parts[3], "index (dropped or unknown)")
        elif f.name.startswith("neostore.nodestore") or f.name.startswith("neostore.labe"):
            family = "store: nodes and labels"
        elif f.name.startswith("neostore.relationship"):
            family = "store: relationships"
        elif f.name.startswith("neostore.propertystore.db.strings"):
            family = "store: long strings"
        elif f.name.startswith("neostore.propertystore.db.arrays"):
            family = "store: arrays (vectors)"
        elif f.name.startswith("neostore.propertystore"):
            family = "store: properties"
        else:
            family = "other (counts, id files, token stores)"
        out[family] += f.stat().st_size
    return dict(out)


def delta(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {k: after.get(k, 0) - before.get(k, 0) for k in sorted(set(after) | set(before))}


async def build_graph(
    service: Memory, size: int, progress: Callable[[int], None]
) -> tuple[str, int]:
    """The corpus, with each memory's entity mentions written as enrichment writes them."""
    texts = turns()
    embedded: list[Embedded] = embed_memories(service.embedder, texts)
    extractions = (
        await service.entities.extract_texts(texts) if service.entities is not None else None
    )
    mentions = 0

    async def with_entities(items: list[MemoryItem], text_of: list[int]) -> None:
        nonlocal mentions
        if service.entities is not None and extractions is not None:
            found = [extractions[n] for n in text_of]
            mentions += await service.entities.write(items[0].tenant, items, found)

    tenant, _ = await corpus.ensure(service, size, texts, embedded, progress, with_entities)
    return tenant, mentions


async def redis_bytes(service: Memory, hot: int) -> dict[str, Any]:
    client = service.hot_tier.client

    async def used() -> int:
        info = await client.info("memory")
        return int(info["used_memory"])

    async def aof() -> int:
        found = await client.config_get("dir")
        return directory_bytes(Path(found["dir"]) / "appendonlydir")

    tenant = f"capacity-{uuid.uuid4().hex[:8]}"
    every = turns()
    # the dev conversations hold fewer turns than that: each one again, numbered
    texts = [f"{every[n % len(every)]} (#{n})" for n in range(hot)]
    start_used, start_aof = await used(), await aof()
    items: list[MemoryItem] = []
    for n in range(0, len(texts), 100):
        batch = [
            {"session_id": f"s{n // 100}", "user_id": f"u{n // 1000}", "content": t}
            for t in texts[n : n + 100]
        ]
        items += await service.ingest.add_many(tenant, batch)
    await asyncio.sleep(1.5)  # appendfsync everysec
    added_used, added_aof = await used(), await aof()
    stream = int(await client.memory_usage(STREAM) or 0)
    embedded = embed_memories(service.embedder, [i.content for i in items])
    by_session: dict[str, dict[str, Enriched]] = defaultdict(dict)
    for item, e in zip(items, embedded, strict=True):
        by_session[item.session_id][item.id] = Enriched(
            vector=list(e.vector), sentences=pack(e.sentences), entities=True
        )
    for session, entries in by_session.items():
        await service.hot_tier.cache_enrichment(
            tenant, session, entries, model=service.embedder.name
        )
    await asyncio.sleep(1.5)
    enriched_used, enriched_aof = await used(), await aof()
    n = len(items)
    return {
        "items": n,
        "mean_content_bytes": sum(len(i.content.encode()) for i in items) / n,
        "used_per_item_added": (added_used - start_used) / n,
        "stream_per_item": stream / n,
        "used_per_item_enriched": (enriched_used - start_used) / n,
        "aof_per_item_added": (added_aof - start_aof) / n,
        "aof_per_item_enriched": (enriched_aof - start_aof) / n,
    }


async def run(size: int, hot: int, keep: bool, graph_from: dict[str, Any] | None) -> dict[str, Any]:
    home = ROOT / ".graphmem" / "capacity"
    shutil.rmtree(home, ignore_errors=True)
    settings = Settings(
        home=home,
        neo4j_lib_dir=ROOT / ".graphmem" / "neo4j-lib",
        neo4j_bolt_port=free_port(),
        neo4j_http_port=free_port(),
        redis_port=free_port(),
        neo4j_password=PASSWORD,
        neo4j_uri=None,
        redis_url=None,
    )
    stack = LocalStack(settings)
    stack.up()
    service = MemoryBuilder.from_settings(
        settings.model_copy(update={"neo4j_uri": stack.neo4j_uri, "redis_url": stack.redis_url})
    ).build()
    database = stack.neo4j.home / "data" / "databases" / settings.neo4j_database
    try:
        await service.migrate()
        if graph_from is not None:
            return {
                "run": run_info(),
                "graph": graph_from,
                "redis": await redis_bytes(service, hot),
            }
        empty = await neo4j_files(service, stack, database)
        started = time.perf_counter()
        with tqdm(total=size, desc=f"{size} memories", file=sys.stderr) as bar:
            tenant, mentions = await build_graph(service, size, bar.update)
        built_s = time.perf_counter() - started
        await service.graph.run("admin/await_indexes", {"timeoutSeconds": 600})
        stored = await neo4j_files(service, stack, database)
        await _own_vector_index(service, tenant)
        with_own = await neo4j_files(service, stack, database)
        graph = {
            "measured": run_info(),
            "memories": size,
            "mentions": mentions,
            "build_seconds": round(built_s, 1),
            "bytes": delta(stored, empty),
            "own_vector_index_bytes": sum(delta(with_own, stored).values()),
            "transaction_logs_bytes": directory_bytes(
                stack.neo4j.home / "data" / "transactions" / settings.neo4j_database
            ),
        }
        redis = await redis_bytes(service, hot)
    finally:
        await service.close()
        stack.down()
        if not keep:
            shutil.rmtree(home, ignore_errors=True)
    return {"run": run_info(), "graph": graph, "redis": redis}


async def _own_vector_index(service: Memory, tenant: str) -> None:
    """The tenant's own vector index, as search creates it past 20,000 memories."""
    await service.graph.search.vector_indexes.choose(tenant, service.embedder.dimension)
    await service.graph.run("admin/await_indexes", {"timeoutSeconds": 600})


def report(r: dict[str, Any]) -> str:
    g, h = r["graph"], r["redis"]
    n = g["memories"]
    measured = g.get("measured", r["run"])
    rows = "\n".join(
        f"| {family} | {b / n:,.0f} | {b / 2**20:,.1f} |"
        for family, b in sorted(g["bytes"].items(), key=lambda kv: -kv[1])
        if b
    )
    total = sum(g["bytes"].values())
    added = f"{h['used_per_item_added']:,.0f} | {h['aof_per_item_added']:,.0f}"
    enriched = f"{h['used_per_item_enriched']:,.0f} | {h['aof_per_item_enriched']:,.0f}"
    return f"""## Capacity: bytes per memory

`python -m bench.capacity` on fresh databases started by the launcher
({measured["date"]}, commit {measured["commit"]}, {measured["machine"]}; Redis
{r["run"]["date"]}, commit {r["run"]["commit"]}). Neo4j:
{n:,} memories in one tenant as spill writes them (LoCoMo turns, 384-dimension vectors,
sentence vectors, {g["mentions"]:,} entity mentions), measured on disk after a
checkpoint; written in {g["build_seconds"]} s.

| Neo4j, by file family | bytes per memory | MB in all |
|---|---|---|
{rows}
| **total** | **{total / n:,.0f}** | **{total / 2**20:,.1f}** |

The tenant's own vector index (a tenant past 20,000 memories) adds
{g["own_vector_index_bytes"] / n:,.0f} bytes per memory. Transaction logs after the
build: {g["transaction_logs_bytes"] / 2**20:,.1f} MB (rotated and pruned by Neo4j's
retention settings, not a per-memory cost).

Redis, {h["items"]:,} hot items (LoCoMo turns, {h["mean_content_bytes"]:.0f} bytes of
text on average) added through the ingest path:

| state | used_memory per item | append-only file per item |
|---|---|---|
| added (items, indexes, versions, enrichment jobs waiting) | {added} |
| enriched (each item's vector and sentence vectors kept beside it) | {enriched} |

The enrichment stream's share while jobs wait: {h["stream_per_item"]:,.0f} bytes per
item (gone once the worker acknowledges them). The model built on these figures is in
[docs/scaling.md](docs/scaling.md).
"""


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--hot", type=int, default=10_000)
    parser.add_argument("--quick", action="store_true", help="2,000 memories, 500 hot items")
    parser.add_argument("--keep", action="store_true", help="keep the databases' directory")
    parser.add_argument("--out", type=Path, help="write JSON here instead of bench/results")
    parser.add_argument(
        "--redis-only",
        action="store_true",
        help="measure Redis again; keep the Neo4j figures of bench/results/capacity.json",
    )
    args = parser.parse_args()
    size, hot = (2_000, 500) if args.quick else (args.memories, args.hot)
    graph_from = None
    if args.redis_only:
        graph_from = json.loads((RESULTS / "capacity.json").read_text())["graph"]
    result = await run(size, hot, args.keep, graph_from)
    publish("capacity", result, report(result), args.out)


if __name__ == "__main__":
    asyncio.run(main())
