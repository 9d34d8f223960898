"""Measurements more than one program makes: spaCy's throughput as enrichment runs it, a
spill's rate, and how soon an add is found by search (write to read)."""

from __future__ import annotations

import asyncio
import random
import statistics
import time
import uuid
from typing import Any

from bench.lib.documents import ADD
from bench.lib.server import Conn, Server, Stats
from bench.lib.stats import percentile
from graphmem.enrich.ner import EntityExtractor, load_nlp
from graphmem.memory import Memory


def extractor_throughput(texts: list[str], repeats: int) -> float:
    """docs/s of ``EntityExtractor.extract`` as spill runs it, median of ``repeats``."""
    extractor = EntityExtractor(load_nlp())
    extractor.extract(texts[:20])  # warm-up
    rates = []
    for _ in range(repeats):
        started = time.perf_counter()
        extractor.extract(texts)
        rates.append(len(texts) / (time.perf_counter() - started))
    return statistics.median(rates)


async def timed_spill(service: Memory, tenant: str, user: str, texts: list[str]) -> float:
    """Items/s of one spill of ``texts``, added to a session of ``user`` beforehand."""
    session = f"{user}-spill"
    for start in range(0, len(texts), 500):
        await service.ingest.add_many(
            tenant,
            [
                {"session_id": session, "user_id": user, "content": t}
                for t in texts[start : start + 500]
            ],
        )
    started = time.perf_counter()
    await service.spills.spill(tenant, session, count=len(texts))
    return len(texts) / (time.perf_counter() - started)


SEARCH = """query($q: String!, $u: ID) { search(query: $q, userId: $u, limit: 10) {
  item { id } } }"""


async def write_to_read(
    server: Server, key: str, texts: list[str], rate: float, n: int
) -> dict[str, Any]:
    """Adds paced at ``rate``/s under ``key``, each with a word of its own; per add, the
    time from its acknowledgement until a search of the user's scope returns it."""
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
                key,
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
                found = await reader.gql("search", key, SEARCH, {"q": tag, "u": user})
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
