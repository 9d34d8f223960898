"""The facade that holds the capabilities (``MemoryBuilder`` connects them) and exposes
them as attributes."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from typing import Any

from graphmem.domain.models import scope_tokens
from graphmem.enrich import lexical
from graphmem.enrich.embed import Embedder
from graphmem.enrich.tokens import TokenCounter
from graphmem.errors import Unavailable
from graphmem.memory.entities.graph import KnowledgeGraph
from graphmem.memory.entities.memory import EntityMemory
from graphmem.memory.episodes.memory import EpisodicMemory
from graphmem.memory.erasure.erasure import Erasure
from graphmem.memory.inputs import Inputs, Limits
from graphmem.memory.kinds.items.store import ItemMemory
from graphmem.memory.kinds.router import MemoryManager
from graphmem.memory.kinds.working import WorkingMemory
from graphmem.memory.policy import MemoryRules
from graphmem.memory.search.ranking import Ranker
from graphmem.memory.search.recall import Recall
from graphmem.memory.search.weights import Weights
from graphmem.memory.tiers.admission import Admission
from graphmem.memory.tiers.corrections import Corrections
from graphmem.memory.tiers.ingest import Ingest
from graphmem.memory.tiers.listing import Listing
from graphmem.memory.tiers.maintenance import Maintenance
from graphmem.memory.tiers.promotion import Promotion
from graphmem.memory.tiers.removal import Removal
from graphmem.memory.tiers.reporting import Reporting
from graphmem.memory.tiers.sessions import Sessions
from graphmem.memory.tiers.spill import Spiller
from graphmem.memory.writepath.analysis import analysed
from graphmem.memory.writepath.changes import ScopeChanges
from graphmem.memory.writepath.enrichment import Enrichment
from graphmem.memory.writepath.spaces import TenantSpaces
from graphmem.memory.writepath.worker import EnrichmentWorker
from graphmem.memory.writepath.writebehind import WriteBehind
from graphmem.metrics import Metrics
from graphmem.settings import MemoryConfig
from graphmem.stores import ChangeFeed, EnrichmentQueue, GraphStore, HotTier, ScopeVersions

log = logging.getLogger("graphmem.memory")


@dataclass(eq=False, repr=False, kw_only=True)
class Memory:
    """One per process, built by ``MemoryBuilder`` (which connects the parts). The parts:

    ``ingest`` add memories · ``spills`` spill to the graph · ``promotion`` promote and
    the cascading get · ``recall`` search and recall (``ranker`` the ranking itself,
    ``ranker.cache`` the search scopes held in memory) · ``changes`` the scope versions
    every graph write bumps ·
    ``removal`` forget and prune · ``corrections`` retract and unretract ·
    ``reports`` hot list, stats, find, status ·
    ``listing`` memories page by page (by metadata) and the sessions holding them ·
    ``maintenance`` the background pass · ``sessions`` per-session settings ·
    ``admission`` rate limits and quotas per tenant · ``write_behind`` and ``worker``
    make every added memory findable in the graph (with ``queue``, the enrichment
    stream) ·
    ``entities``, ``episodes``, ``working``, ``manager`` the other memory types ·
    ``knowledge`` the knowledge graph of the MCP memory-server tools ·
    ``hot_tier``, ``graph``, ``embedder`` the stores and models underneath.
    """

    hot_tier: HotTier
    graph: GraphStore
    embedder: Embedder
    tokens: TokenCounter
    rules: MemoryRules
    config: MemoryConfig
    limits: Limits
    metrics: Metrics
    weights: Weights
    events: ChangeFeed
    entities: EntityMemory | None
    #: the agent-curated graph of the MCP memory-server tools (``create_entities`` ...)
    knowledge: KnowledgeGraph | None
    episodes: EpisodicMemory | None
    working: WorkingMemory
    #: the router over every memory type (with stores for personas, records and history)
    manager: MemoryManager | None
    #: LangGraph store items by (namespace, key), in the graph (None: not configured)
    items: ItemMemory | None
    #: scope versions: every graph write path bumps them (``changes``), search reads
    #: them to keep its scope views exact (``ranker.cache``)
    versions: ScopeVersions | None
    changes: ScopeChanges
    inputs: Inputs
    sessions: Sessions
    admission: Admission
    queue: EnrichmentQueue | None
    enrichment: Enrichment
    write_behind: WriteBehind
    #: runs the queue's write-behind jobs; ``graphmem worker`` runs it as a process
    worker: EnrichmentWorker | None
    spills: Spiller
    ingest: Ingest
    promotion: Promotion
    #: which model's vectors each tenant holds (search refuses to mix two)
    spaces: TenantSpaces
    ranker: Ranker
    recall: Recall
    removal: Removal
    #: forget with a receipt and a tombstone (``graphmem/memory/erasure/``)
    erasure: Erasure
    #: retract and unretract (``tiers/corrections.py``)
    corrections: Corrections
    reports: Reporting
    listing: Listing
    maintenance: Maintenance

    async def observe_queue(self) -> None:
        """Copy the enrichment queue's backlog, lag and parked count into the metrics (the
        queue lives in Redis, shared by every replica and worker: read it when asked)."""
        if self.queue is None:
            return
        try:
            stats = await self.queue.stats()
        except Unavailable:
            return  # /metrics still answers; readiness reports the outage
        self.metrics.queue(stats.backlog, stats.oldest_seconds, stats.parked)

    async def close(self) -> None:
        await self.spills.close()
        await self.hot_tier.close()
        await self.graph.close()

    async def migrate(self) -> list[str]:
        await self.hot_tier.migrate()
        applied = await self.graph.migrate(self.embedder.dimension)
        await self.graph.backfill_scope_tokens(scope_tokens)
        return applied

    async def provision(self, tenants: Iterable[str]) -> list[str]:
        """Make what each of these tenants needs in the stores before its first request
        (its indexes: ``stores/neo4j/fulltext.py`` says why not on first use)."""
        return await self.graph.provision(sorted(set(tenants)))

    async def backfill_terms(self) -> int:
        """Give memories analysed by no or another version of ``enrich/lexical.py`` their
        stems' hashes (``termBytes``); how many it analysed. Search does without them
        meanwhile (their scopes go through Lucene), so the API runs this in the
        background after start rather than before serving."""
        return await self.graph.backfill_terms(analysed, lexical.VERSION)

    def subscribe(self, tenant: str) -> AsyncIterator[dict[str, Any]]:
        """The tenant's change feed as it happens (Redis pub/sub, every replica's
        events); UNAVAILABLE for a service built without Redis events."""
        return self.events.subscribe(tenant)

    async def readiness(self) -> dict[str, str]:
        """'ok' or the reason per dependency; never raises."""
        report: dict[str, str] = {}
        for name, probe in (("neo4j", self.graph.ping), ("redis", self.hot_tier.ping)):
            try:
                await asyncio.wait_for(probe(), timeout=3.0)
                report[name] = "ok"
            except (Unavailable, TimeoutError):
                report[name] = "unreachable"
            except Exception:  # readiness must answer, whatever the driver raised
                log.exception("readiness probe %s failed", name)
                report[name] = "error"
        return report
