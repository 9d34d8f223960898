"""Large stored corpora for search-latency runs: 10k and 100k memories in the graph.

Enriching 100,000 memories through the spill path (embedding and NER at ~150 items/s)
would take a quarter of an hour, longer than the whole perf suite may run; ingest speed is
measured separately. Here every memory is written through the graph store's own batched
upsert (the statement spill uses) with an embedding mixed from real embeddings of LoCoMo
turns by the process's model: ``normalise(E[a] + 0.3 E[b] + noise)`` for turn ``a``'s
text, so vectors are distinct, spread like real ones, and the text is real conversation;
turn ``a``'s sentence vectors (for a model that has them) go with it, as spill would store
them.

Shape: users of ``sessions`` sessions of ``turns`` memories each, in one tenant per
size and embedding model, so a search can be scoped to a user (a realistic agent query)
or span the tenant. A corpus is kept between runs and reused when it is complete
(``corpus_tenant``); a tenant holds one model's vectors (docs/embedders.md), so each
model the bench runs with has a corpus of its own.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta

import numpy as np

from graphmem.domain.models import EmbeddingSpace, MemoryItem, MemoryType, Tier, content_hash
from graphmem.enrich.sentences import Embedded, pack
from graphmem.memory import Memory
from graphmem.memory.writepath.analysis import graph_memory
from graphmem.stores.models import GraphMemory

VERSION = 2
SESSIONS_PER_USER = 10
TURNS_PER_SESSION = 100
BATCH = 1000


def corpus_tenant(size: int, model: str) -> str:
    """The tenant of the corpus of ``size`` memories embedded by ``model`` (its name)."""
    return f"perf-corpus-v{VERSION}-{size}-{model.lower()}"


def user_ids(size: int) -> list[str]:
    return [f"u{n:04d}" for n in range(size // (SESSIONS_PER_USER * TURNS_PER_SESSION))]


async def stored(service: Memory, size: int) -> int:
    tenant = corpus_tenant(size, service.embedder.name)
    total = 0
    for user in user_ids(size):
        params = {"tenant": tenant, "userId": user, "tiers": ["warm", "cold"], "cap": size}
        (row,) = await service.graph.run("memory/scope_size_user", params)
        total += int(row["n"])
    return total


async def ensure(
    service: Memory,
    size: int,
    texts: list[str],
    embedded: list[Embedded],
    progress: Callable[[int], None] | None = None,
    written: Callable[[list[MemoryItem], list[int]], Awaitable[None]] | None = None,
) -> tuple[str, bool]:
    """The tenant holding a complete corpus of ``size`` memories; (tenant, built now).
    ``written`` is given each batch once stored, with the index of each one's text.

    A partial corpus (an interrupted run) is written over: ``write`` is deterministic and
    the upsert idempotent, so the same ids converge on the same memories. It is not
    forgotten first: a forgotten user's tombstone refuses every later write of memories
    created before it, and the corpus's are dated 2024."""
    tenant = corpus_tenant(size, service.embedder.name)
    if await stored(service, size) == size:
        return tenant, False
    await write(service, tenant, size, texts, embedded, progress, written)
    if (found := await stored(service, size)) != size:
        raise RuntimeError(f"corpus {tenant}: {found} of {size} memories stored")
    await settle_indexes(service, tenant)
    return tenant, True


async def settle_indexes(service: Memory, tenant: str) -> None:
    """After a corpus is built: its tenant's own vector index (created once the tenant
    outgrows the shared one) and its fulltext index populated, and the own index chosen,
    so that no measurement runs beside Neo4j building them (a perf run that did measured
    a tenant-wide hybrid p50 of 87 ms, 81 of them asking the index's state)."""
    indexes = service.graph.search.vector_indexes  # type: ignore[attr-defined]
    await indexes.choose(tenant, service.embedder.dimension)
    await service.graph.run("admin/await_indexes", {"timeoutSeconds": 900})  # type: ignore[attr-defined]
    await indexes.choose(tenant, service.embedder.dimension)


async def crowd(
    service: Memory, tenant: str, size: int, texts: list[str], embedded: list[Embedded]
) -> None:
    """``size`` memories of other users (``crowd-u0000``...) in ``tenant``: what a user's
    recall must not depend on (``bench/locomo.py --crowd``)."""
    await write(service, tenant, size, texts, embedded, user_prefix="crowd-")


def crowd_users(size: int) -> list[str]:
    per_user = SESSIONS_PER_USER * TURNS_PER_SESSION
    return [f"crowd-u{n:04d}" for n in range(-(-size // per_user))]


async def write(
    service: Memory,
    tenant: str,
    size: int,
    texts: list[str],
    embedded: list[Embedded],
    progress: Callable[[int], None] | None = None,
    written: Callable[[list[MemoryItem], list[int]], Awaitable[None]] | None = None,
    user_prefix: str = "",
) -> None:
    rng = np.random.default_rng(size)
    vectors = np.asarray([e.vector for e in embedded], dtype=np.float32)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    per_user = SESSIONS_PER_USER * TURNS_PER_SESSION
    rows: list[GraphMemory] = []
    items: list[MemoryItem] = []
    text_of: list[int] = []

    async def flush() -> None:
        await service.graph.upsert(tenant, rows, EmbeddingSpace.of(service.embedder))
        if written is not None:
            await written(items, text_of)
        if progress:
            progress(len(rows))
        rows.clear()
        items.clear()
        text_of.clear()

    for n in range(size):
        user = n // per_user
        session = (n % per_user) // TURNS_PER_SESSION
        a = int(rng.integers(len(texts)))
        b = int(rng.integers(len(texts)))
        vector = vectors[a] + 0.3 * vectors[b] + rng.normal(0, 0.02, vectors.shape[1])
        vector /= np.linalg.norm(vector)
        at = start + timedelta(minutes=n)
        item = MemoryItem(
            id="mem_" + hashlib.sha1(f"{tenant}:{n}".encode()).hexdigest()[:32],
            tenant=tenant,
            session_id=f"{user_prefix}u{user:04d}-s{session:02d}",
            user_id=f"{user_prefix}u{user:04d}",
            content=texts[a],
            type=MemoryType.MESSAGE,
            tier=Tier.COLD,
            access_count=0,
            last_accessed_at=at,
            created_at=at,
            relevance_score=1.0,
            token_count=max(1, len(texts[a]) // 4),
            content_hash=content_hash(texts[a]),
            metadata={},
            seq=n,
        )
        vector_list = vector.astype(np.float32).tolist()
        rows.append(graph_memory(item, vector_list, pack(embedded[a].sentences)))
        items.append(item)
        text_of.append(a)
        if len(rows) == BATCH:
            await flush()
    if rows:
        await flush()
