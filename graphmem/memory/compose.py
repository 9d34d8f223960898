"""How a memory service is composed: every capability built from the parts a
``MemoryBuilder`` was given, and the ``Memory`` facade that holds them.

The builder (``builder.py``) collects the parts (``Parts``) and checks them; ``compose``
builds each capability once, with the collaborators it needs, in the order they depend on
each other, so that no capability is connected to another after construction.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import timedelta

from graphmem.domain.models import EmbeddingSpace
from graphmem.enrich.embed import Embedder
from graphmem.enrich.ner import EntityExtractor
from graphmem.enrich.tokens import TokenCounter
from graphmem.memory.entities.graph import KnowledgeGraph
from graphmem.memory.entities.memory import EntityMemory
from graphmem.memory.episodes.memory import EpisodicMemory
from graphmem.memory.erasure.erasure import Erasure
from graphmem.memory.facade import Memory
from graphmem.memory.inputs import Inputs, Limits
from graphmem.memory.kinds.items.store import ItemMemory
from graphmem.memory.kinds.items.vectors import ItemVectors
from graphmem.memory.kinds.router import MemoryManager
from graphmem.memory.kinds.working import WorkingMemory
from graphmem.memory.policy import DemotionPolicy, IdleWarmDemotion, MemoryRules
from graphmem.memory.search.ranking import Ranker
from graphmem.memory.search.recall import Recall
from graphmem.memory.search.scopecache import ScopeCache
from graphmem.memory.search.weights import weights_for
from graphmem.memory.tiers.admission import Admission, AdmissionLimits
from graphmem.memory.tiers.corrections import Corrections
from graphmem.memory.tiers.ingest import Ingest
from graphmem.memory.tiers.listing import Listing
from graphmem.memory.tiers.maintenance import Maintenance
from graphmem.memory.tiers.promotion import Promotion
from graphmem.memory.tiers.removal import Removal
from graphmem.memory.tiers.reporting import Reporting
from graphmem.memory.tiers.sessions import Sessions
from graphmem.memory.tiers.spill import Spiller
from graphmem.memory.writepath.changes import ScopeChanges
from graphmem.memory.writepath.enrichment import Enrichment
from graphmem.memory.writepath.spaces import TenantSpaces
from graphmem.memory.writepath.worker import EnrichmentWorker
from graphmem.memory.writepath.writebehind import WriteBehind
from graphmem.metrics import Metrics
from graphmem.settings import MemoryConfig, PersonaConfig
from graphmem.stores import (
    AdmissionStore,
    ChangeFeed,
    ConversationStore,
    EnrichmentQueue,
    EntityStore,
    EpisodeStore,
    GraphStore,
    HotTier,
    ItemStore,
    KindErasure,
    KnowledgeStore,
    Leases,
    ProfileStore,
    ScopeVersions,
    WorkingStore,
)
from graphmem.stores.null import NullBus


@dataclass
class Parts:
    """What a builder has been given: the stores, models, settings and policies the
    capabilities are built from (each ``MemoryBuilder.with_*`` sets some). The hot tier,
    the graph and the embedder are required; the rest switch a capability off or take
    their defaults when left unset."""

    hot: HotTier | None = None
    graph: GraphStore | None = None
    embedder: Embedder | None = None
    query_embedder: Embedder | None = None
    tokens: TokenCounter | None = None
    config: MemoryConfig = field(default_factory=MemoryConfig)
    limits: Limits = field(default_factory=Limits)
    rules: MemoryRules = field(default_factory=MemoryRules)
    demotion: DemotionPolicy | None = None
    metrics: Metrics | None = None
    events: ChangeFeed | None = None
    admission: AdmissionStore | None = None
    admission_limits: AdmissionLimits = field(default_factory=AdmissionLimits)
    entity_store: EntityStore | None = None
    extractor: EntityExtractor | None = None
    aliases: dict[str, str] = field(default_factory=dict)
    episode_store: EpisodeStore | None = None
    kind_erasure: KindErasure | None = None
    knowledge_store: KnowledgeStore | None = None
    profiles: ProfileStore | None = None
    items: ItemStore | None = None
    conversation: ConversationStore | None = None
    working: WorkingStore | None = None
    leases: Leases | None = None
    personas: dict[str, PersonaConfig] = field(default_factory=dict)
    queue: EnrichmentQueue | None = None
    versions: ScopeVersions | None = None
    cache_bytes: int = 256 * 2**20
    cache_scope_limit: int = 20_000
    #: the key erasure receipts are signed with; None: a random key of this process
    receipt_key: bytes | None = None
    tombstone_days: float = 30.0


def compose(parts: Parts, hot: HotTier, graph: GraphStore, embedder: Embedder) -> Memory:
    """Every capability, each built with the collaborators it needs (nothing is
    connected after construction); ``hot``, ``graph`` and ``embedder`` are the parts'
    own, checked by the builder."""
    rules = parts.rules
    config = parts.config
    if rules.hot_ttl is not None:
        config = config.merged(session_ttl_seconds=rules.hot_ttl)
    hot.ttl = config.session_ttl_seconds
    metrics = parts.metrics or Metrics()
    events: ChangeFeed = parts.events or NullBus()
    queue, versions = parts.queue, parts.versions
    space = EmbeddingSpace.of(embedder)
    entities = (
        EntityMemory(
            parts.entity_store,
            parts.extractor or EntityExtractor(),
            aliases=parts.aliases,
            events=events,
        )
        if parts.entity_store is not None
        else None
    )
    changes = ScopeChanges(versions)
    inputs = Inputs(parts.limits)
    sessions = Sessions(hot, config)

    async def workers_alive() -> bool:
        assert queue is not None
        return await queue.workers(EnrichmentWorker.silent_after_seconds) > 0

    enrichment = Enrichment(hot, embedder, entities, workers_alive if queue is not None else None)
    write_behind = WriteBehind(hot, graph, sessions, embedder, changes, entities)
    spills = Spiller(hot, graph, sessions, enrichment, metrics, events, changes)
    reports = Reporting(inputs, hot, graph, sessions, spills, queue)

    async def exact_usage(tenant: str) -> tuple[int, int]:
        """What the tenant stores in the hot tier and the graph, every kind (the pads
        it keeps in Redis are the admission store's to count)."""
        rows = await reports.stats(tenant)
        kinds_n, kinds_b = await graph.scans.kinds_usage(tenant)
        return kinds_n + sum(r["items"] for r in rows), kinds_b + sum(r["bytes"] for r in rows)

    # Every memory type's writes count against the tenant's quota (tiers/quota.py).
    admission = Admission(parts.admission, parts.admission_limits, metrics, exact_usage)
    # The memory types publish to the same change feed and share working memory.
    working = WorkingMemory(parts.working, quota=admission)
    spaces = TenantSpaces(graph.spaces, space)
    knowledge = (
        KnowledgeGraph(parts.knowledge_store, quota=admission, events=events)
        if parts.knowledge_store is not None
        else None
    )
    episodes = (
        EpisodicMemory(
            parts.episode_store,
            embedder,
            events=events,
            working=working,
            quota=admission,
            spaces=spaces,
        )
        if parts.episode_store is not None
        else None
    )
    ingest = Ingest(
        inputs,
        sessions,
        hot,
        graph,
        parts.tokens or TokenCounter(),
        spills,
        enrichment,
        changes,
        space,
        rules,
        metrics,
        events,
        admission,
        queue,
    )
    promotion = Promotion(hot, graph, sessions, spills, rules, metrics, events, changes)
    cache = ScopeCache(
        graph.search, versions, embedder.dimension, parts.cache_bytes, parts.cache_scope_limit
    )
    metrics.search_cache_bytes.set_function(lambda: cache.held_bytes)
    weights = weights_for(embedder.name)
    ranker = Ranker(inputs, graph, embedder, weights, entities, cache, parts.query_embedder, spaces)
    recall = Recall(ranker, hot, graph, sessions, enrichment, promotion, metrics, events, changes)
    manager = (
        MemoryManager(
            ingest,
            spills,
            recall,
            working,
            config,
            parts.profiles,
            parts.conversation,
            parts.personas,
            episodes,
            entities,
            quota=admission,
        )
        if parts.profiles is not None and parts.conversation is not None
        else None
    )
    demotion = parts.demotion or IdleWarmDemotion(
        timedelta(seconds=config.demote_after_idle_seconds)
    )
    return Memory(
        hot_tier=hot,
        graph=graph,
        embedder=embedder,
        tokens=ingest.tokens,
        rules=rules,
        config=config,
        limits=parts.limits,
        metrics=metrics,
        weights=weights,
        events=events,
        entities=entities,
        knowledge=knowledge,
        episodes=episodes,
        working=working,
        manager=manager,
        items=ItemMemory(
            parts.items,
            embedder,
            ranker.query_vectors,
            quota=admission,
            events=events,
            vectors=ItemVectors(parts.items, _one_thread(parts, embedder), embedder.name),
            costs=admission,
        )
        if parts.items is not None
        else None,
        versions=versions,
        changes=changes,
        inputs=inputs,
        sessions=sessions,
        admission=admission,
        queue=queue,
        enrichment=enrichment,
        write_behind=write_behind,
        worker=EnrichmentWorker(queue, write_behind) if queue is not None else None,
        spills=spills,
        ingest=ingest,
        promotion=promotion,
        spaces=spaces,
        ranker=ranker,
        recall=recall,
        removal=Removal(hot, graph, sessions, events, changes, entities),
        erasure=Erasure(
            hot,
            graph,
            sessions,
            events,
            changes,
            parts.receipt_key or secrets.token_bytes(32),
            parts.tombstone_days,
            entities,
            parts.conversation,
            parts.kind_erasure,
            parts.working,
        ),
        corrections=Corrections(inputs, hot, graph, spills, events, changes),
        reports=reports,
        listing=Listing(inputs, hot, graph),
        maintenance=Maintenance(
            hot, graph, sessions, spills, demotion, config, changes, parts.leases
        ),
    )


def _one_thread(parts: Parts, embedder: Embedder) -> Embedder:
    """The embedder store items' background vectors take: the query embedder (one
    thread) when it is the same model, so that the pass holds one core."""
    query = parts.query_embedder
    return query if query is not None and query.name == embedder.name else embedder
