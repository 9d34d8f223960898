"""The facade that assembles the capabilities and exposes them as attributes."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from graphmem.domain.models import EmbeddingSpace, scope_tokens
from graphmem.enrich import lexical
from graphmem.enrich.embed import Embedder
from graphmem.enrich.tokens import TokenCounter
from graphmem.errors import Unavailable
from graphmem.memory.entities.memory import EntityMemory
from graphmem.memory.episodes.memory import EpisodicMemory
from graphmem.memory.inputs import Inputs, Limits
from graphmem.memory.kinds.working import WorkingMemory
from graphmem.memory.policy import DemotionPolicy, IdleWarmDemotion, MemoryRules
from graphmem.memory.search.fusion import Weights, weights_for
from graphmem.memory.search.ranking import Ranker
from graphmem.memory.search.recall import Recall
from graphmem.memory.search.scopecache import ScopeCache
from graphmem.memory.tiers.admission import Admission, AdmissionLimits
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
from graphmem.stores import (
    AdmissionStore,
    EnrichmentQueue,
    GraphStore,
    HotTier,
    Leases,
    ScopeVersions,
    WorkingStore,
)
from graphmem.stores.redis.events import EventBus, NullBus

if TYPE_CHECKING:
    from graphmem.memory.kinds.router import MemoryManager

log = logging.getLogger("graphmem.memory")


class Memory:
    """One per process, built by ``MemoryBuilder``. The parts:

    ``ingest`` add memories · ``spills`` spill to the graph · ``promotion`` promote and
    the cascading get · ``recall`` search and recall (``ranker`` the ranking itself,
    ``ranker.cache`` the search scopes held in memory) · ``changes`` the scope versions
    every graph write bumps ·
    ``removal`` forget and prune · ``reports`` hot list, stats, find, status ·
    ``listing`` memories page by page (by metadata) and the sessions holding them ·
    ``maintenance`` the background pass · ``sessions`` per-session settings ·
    ``admission`` rate limits and quotas per tenant · ``write_behind`` and ``worker``
    make every added memory findable in the graph (with ``queue``, the enrichment
    stream) ·
    ``entities``, ``episodes``, ``working``, ``manager`` the other memory types ·
    ``hot_tier``, ``graph``, ``embedder`` the stores and models underneath.
    """

    def __init__(
        self,
        hot: HotTier,
        graph: GraphStore,
        embedder: Embedder,
        tokens: TokenCounter,
        config: MemoryConfig | None = None,
        limits: Limits | None = None,
        rules: MemoryRules | None = None,
        demotion: DemotionPolicy | None = None,
        metrics: Metrics | None = None,
        weights: Weights | None = None,
        events: EventBus | NullBus | None = None,
        entities: EntityMemory | None = None,
        episodes: EpisodicMemory | None = None,
        admission: AdmissionStore | None = None,
        admission_limits: AdmissionLimits | None = None,
        queue: EnrichmentQueue | None = None,
        versions: ScopeVersions | None = None,
        query_embedder: Embedder | None = None,
        cache_bytes: int = 256 * 2**20,
        cache_scope_limit: int = 20_000,
        working: WorkingStore | None = None,
        leases: Leases | None = None,
    ) -> None:
        self.hot_tier = hot
        self.graph = graph
        self.embedder = embedder
        self.tokens = tokens
        self.rules = rules or MemoryRules()
        config = config or MemoryConfig()
        if self.rules.hot_ttl is not None:
            config = config.merged(session_ttl_seconds=self.rules.hot_ttl)
        self.config = config
        hot.ttl = config.session_ttl_seconds
        self.limits = limits or Limits()
        self.metrics = metrics or Metrics()
        self.weights = weights or weights_for(embedder.name)
        self.events = events or NullBus()
        self.entities = entities
        self.episodes = episodes
        self.working = WorkingMemory(working)
        # The memory types publish to the same change feed and share working memory.
        if entities is not None:
            entities.events = self.events
        if episodes is not None:
            episodes.events, episodes.working = self.events, self.working
        #: the router over every memory type, attached by MemoryBuilder
        self.manager: MemoryManager | None = None

        #: scope versions: every graph write path bumps them (``changes``), search reads
        #: them to keep its scope views exact (``ranker.cache``)
        self.versions = versions
        self.changes = ScopeChanges(versions)
        self.inputs = Inputs(self.limits)
        self.sessions = Sessions(hot, config)
        self.admission = Admission(
            admission, admission_limits or AdmissionLimits(), self.metrics, self._exact_usage
        )
        # Every memory type's writes count against the tenant's quota (tiers/quota.py).
        self.working.quota = self.admission
        if episodes is not None:
            episodes.quota = self.admission
        self.queue = queue
        self.enrichment = Enrichment(
            hot, embedder, entities, self._workers_alive if queue is not None else None
        )
        self.write_behind = WriteBehind(hot, graph, self.sessions, embedder, self.changes, entities)
        #: runs the queue's write-behind jobs; ``graphmem worker`` runs it as a process
        self.worker = EnrichmentWorker(queue, self.write_behind) if queue is not None else None
        self.spills = Spiller(
            hot, graph, self.sessions, self.enrichment, self.metrics, self.events, self.changes
        )
        self.ingest = Ingest(
            self.inputs,
            self.sessions,
            hot,
            graph,
            tokens,
            self.spills,
            self.rules,
            self.metrics,
            self.events,
            self.admission,
            queue,
        )
        self.promotion = Promotion(
            hot,
            graph,
            self.sessions,
            self.spills,
            self.rules,
            self.metrics,
            self.events,
            self.changes,
        )
        cache = ScopeCache(
            graph.search, versions, embedder.dimension, cache_bytes, cache_scope_limit
        )
        self.metrics.search_cache_bytes.set_function(lambda: cache.held_bytes)
        #: which model's vectors each tenant holds (search refuses to mix two)
        self.spaces = TenantSpaces(graph.spaces, EmbeddingSpace.of(embedder))
        if episodes is not None:
            episodes.spaces = self.spaces
        self.ranker = Ranker(
            self.inputs,
            graph,
            embedder,
            self.weights,
            entities,
            cache,
            query_embedder,
            self.spaces,
        )
        self.recall = Recall(
            self.ranker,
            hot,
            graph,
            self.sessions,
            self.enrichment,
            self.promotion,
            self.metrics,
            self.events,
            self.changes,
        )
        self.removal = Removal(hot, graph, self.sessions, self.events, self.changes, entities)
        self.reports = Reporting(self.inputs, hot, graph, self.sessions, self.spills, queue)
        self.listing = Listing(self.inputs, hot, graph)
        demotion = demotion or IdleWarmDemotion(timedelta(seconds=config.demote_after_idle_seconds))
        self.maintenance = Maintenance(
            hot, graph, self.sessions, self.spills, demotion, config, self.changes, leases
        )

    async def _exact_usage(self, tenant: str) -> tuple[int, int]:
        """What the tenant stores in the hot tier and the graph, every kind (the pads it
        keeps in Redis are the admission store's to count)."""
        rows = await self.reports.stats(tenant)
        kinds_n, kinds_b = await self.graph.scans.kinds_usage(tenant)
        return kinds_n + sum(r["items"] for r in rows), kinds_b + sum(r["bytes"] for r in rows)

    async def _workers_alive(self) -> bool:
        assert self.queue is not None
        return await self.queue.workers(EnrichmentWorker.silent_after_seconds) > 0

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

    async def backfill_terms(self) -> int:
        """Give memories analysed by no or another version of ``enrich/lexical.py`` their
        stems' hashes (``termBytes``); how many it analysed. Search does without them
        meanwhile (their scopes go through Lucene), so the API runs this in the
        background after start rather than before serving."""
        return await self.graph.backfill_terms(analysed, lexical.VERSION)

    def subscribe(self, tenant: str) -> AsyncIterator[dict[str, Any]]:
        """The tenant's change feed as it happens (Redis pub/sub, every replica's
        events); UNAVAILABLE for a service built without Redis events."""
        if not isinstance(self.events, EventBus):
            raise Unavailable("the change feed needs Redis events (MemoryBuilder.with_events)")
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
