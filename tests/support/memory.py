"""A memory service over the in-memory stores, built the way the service is built
(``MemoryBuilder``), with its stores at hand for a test to look into."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from graphmem.domain.models import MemoryItem
from graphmem.enrich.embed import Embedder
from graphmem.memory import Memory
from graphmem.memory.builder import MemoryBuilder
from tests.support.enrich import HashEmbedder, WordCounter
from tests.support.fakes.clock import ManualClock
from tests.support.fakes.graph import FakeGraphStore
from tests.support.fakes.hot import FakeHotTier
from tests.support.fakes.leases import FakeLeases
from tests.support.fakes.queue import FakeEnrichmentQueue
from tests.support.fakes.versions import FakeScopeVersions

TENANT = "tenant-a"
OTHER_TENANT = "tenant-b"


@dataclass
class Fakes:
    """A built service and the fakes under it."""

    memory: Memory
    hot: FakeHotTier
    graph: FakeGraphStore
    embedder: Embedder
    clock: ManualClock
    leases: FakeLeases
    versions: FakeScopeVersions | None = None
    queue: FakeEnrichmentQueue | None = None
    added: list[MemoryItem] = field(default_factory=list)

    async def add(
        self, content: str, session_id: str = "s1", tenant: str = TENANT, **spec: Any
    ) -> MemoryItem:
        # a dict, as the API passes it: the service validates it (BadInput)
        item = await self.memory.ingest.add(
            tenant, {"session_id": session_id, "content": content, **spec}
        )
        self.added.append(item)
        return item

    async def hot_ids(self, session_id: str = "s1", tenant: str = TENANT) -> set[str]:
        return {i.id for i in await self.hot.items(tenant, session_id)}

    def graph_tiers(self, tenant: str = TENANT) -> dict[str, str]:
        """Each graph memory of the tenant, by id, with its tier."""
        return {m["id"]: m["tier"] for m in self.graph.nodes(tenant)}


def fake_memory(
    *,
    versions: bool = True,
    queue: bool = False,
    rules: dict[str, Any] | None = None,
    embedder: Embedder | None = None,
    **config: Any,
) -> Fakes:
    """A service over fakes; ``config`` overrides the tier settings (either naming style),
    ``rules`` the cross-tier rules; ``versions``: with scope versions, so search keeps
    scopes in memory (without, it asks the graph); ``queue``: with an enrichment queue,
    so adds are written behind by a worker; ``embedder``: another than ``HashEmbedder``."""
    clock = ManualClock()
    hot = FakeHotTier(clock=clock)
    graph = FakeGraphStore()
    vectors = embedder or HashEmbedder()
    leases = FakeLeases(clock)
    scope_versions = FakeScopeVersions() if versions else None
    jobs = FakeEnrichmentQueue(clock) if queue else None
    builder = (
        MemoryBuilder()
        .with_hot(hot)
        .with_graph(graph)
        .with_embedder(vectors)
        .with_tokens(WordCounter())
        .with_leases(leases)
        .with_queue(jobs)
        .with_scope_cache(scope_versions)
        .with_config(**config)
    )
    if rules:
        builder.with_rules(**rules)
    memory = builder.build()
    return Fakes(memory, hot, graph, vectors, clock, leases, scope_versions, jobs)
