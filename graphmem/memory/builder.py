"""MemoryBuilder: the fluent way to assemble a memory service (docs/concepts.md#builder).

    memory = (
        MemoryBuilder()
        .with_hot(RedisHotTier.connect(redis_url, ttl))
        .with_graph(Neo4jGraphStore.connect(uri, user, password, library()))
        .with_embedder(MiniLMInt8Embedder())
        .build()
    )

``with_rules(read_fallback, promote_on_read, write_through, hot_ttl)`` sets the
cross-tier rules; ``with_demotion(policy)`` swaps the warm → cold policy.
``build()`` validates before anything runs: a missing tier, an object that does not
satisfy a tier protocol, or incoherent rules is a ``ConfigurationError`` naming what
is wrong.
``MemoryBuilder.from_settings(settings)`` wires the real Redis, Neo4j and embedder.
"""

from __future__ import annotations

from datetime import timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any, Self

from graphmem.domain.models import EmbeddingSpace
from graphmem.enrich.embed import Embedder
from graphmem.enrich.embedders import make_embedder
from graphmem.enrich.ner import EntityExtractor
from graphmem.enrich.tokens import TokenCounter
from graphmem.errors import ConfigurationError
from graphmem.memory.entities.memory import EntityMemory
from graphmem.memory.episodes.memory import EpisodicMemory
from graphmem.memory.facade import Memory
from graphmem.memory.inputs import Inputs, Limits
from graphmem.memory.kinds.router import MemoryManager
from graphmem.memory.kinds.working import WorkingMemory
from graphmem.memory.policy import DemotionPolicy, IdleWarmDemotion, MemoryRules
from graphmem.memory.search.ranking import Ranker
from graphmem.memory.search.recall import Recall
from graphmem.memory.search.scopecache import ScopeCache
from graphmem.memory.search.weights import weights_for
from graphmem.memory.tiers.admission import Admission, AdmissionLimits
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
from graphmem.settings import MemoryConfig, PersonaConfig, Settings
from graphmem.stores import (
    AdmissionStore,
    ConversationStore,
    EnrichmentQueue,
    EntityStore,
    EpisodeStore,
    GraphStore,
    HotTier,
    Leases,
    ProfileStore,
    ScopeVersions,
    WorkingStore,
)
from graphmem.stores.neo4j.entities import Neo4jEntityStore
from graphmem.stores.neo4j.episodes import Neo4jEpisodeStore
from graphmem.stores.neo4j.graph import Neo4jGraphStore
from graphmem.stores.neo4j.library import library
from graphmem.stores.neo4j.profiles import Neo4jProfileStore
from graphmem.stores.redis.admission import RedisAdmission
from graphmem.stores.redis.bookmarks import SharedBookmarks
from graphmem.stores.redis.conversation import RedisConversationStore
from graphmem.stores.redis.events import EventBus, NullBus
from graphmem.stores.redis.hot import RedisHotTier
from graphmem.stores.redis.lease import RedisLeases
from graphmem.stores.redis.queue import RedisEnrichmentQueue
from graphmem.stores.redis.versions import RedisScopeVersions
from graphmem.stores.redis.working import RedisWorkingStore


@lru_cache(maxsize=4)
def shared_embedder(
    name: str, threads: int, *, arena: bool = True, models_dir: Path | None = None
) -> Embedder:
    """One embedder per process and configuration: a model session holds ~100 MB and is
    safe to call from several threads, so services built from settings share it."""
    return make_embedder(name, threads, arena=arena, models_dir=models_dir)


class MemoryBuilder:
    def __init__(self) -> None:
        self._hot: HotTier | None = None
        self._graph: GraphStore | None = None
        self._embedder: Embedder | None = None
        self._tokens: TokenCounter | None = None
        self._config = MemoryConfig()
        self._limits = Limits()
        self._rules = MemoryRules()
        self._demotion: DemotionPolicy | None = None
        self._metrics: Metrics | None = None
        self._events: EventBus | None = None
        self._admission: AdmissionStore | None = None
        self._admission_limits = AdmissionLimits()
        self._entity_store: EntityStore | None = None
        self._extractor: EntityExtractor | None = None
        self._aliases: dict[str, str] = {}
        self._episode_store: EpisodeStore | None = None
        self._profiles: ProfileStore | None = None
        self._conversation: ConversationStore | None = None
        self._working: WorkingStore | None = None
        self._leases: Leases | None = None
        self._personas: dict[str, PersonaConfig] = {}
        self._queue: EnrichmentQueue | None = None
        self._versions: ScopeVersions | None = None
        self._query_embedder: Embedder | None = None
        self._cache_bytes = 256 * 2**20
        self._cache_scope_limit = 20_000

    def with_hot(self, hot: HotTier) -> Self:
        self._hot = hot
        return self

    def with_graph(self, graph: GraphStore) -> Self:
        self._graph = graph
        return self

    def with_embedder(self, embedder: Embedder) -> Self:
        self._embedder = embedder
        return self

    def with_query_embedder(self, embedder: Embedder | None) -> Self:
        """An embedder for search queries alone (None: the one ``with_embedder`` set);
        it must produce the same vectors."""
        self._query_embedder = embedder
        return self

    def with_tokens(self, tokens: TokenCounter) -> Self:
        self._tokens = tokens
        return self

    def with_config(self, config: MemoryConfig | None = None, **overrides: Any) -> Self:
        """The tier settings; keyword overrides accept either naming style."""
        try:
            self._config = (config or self._config).merged(**overrides)
        except ValueError as exc:
            raise ConfigurationError(f"invalid memory config: {exc}") from exc
        return self

    def with_limits(self, limits: Limits) -> Self:
        self._limits = limits
        return self

    def with_rules(self, **rules: Any) -> Self:
        """read_fallback, promote_on_read, write_through (bools), hot_ttl (seconds)."""
        try:
            self._rules = MemoryRules.model_validate({**self._rules.model_dump(), **rules})
        except ValueError as exc:
            raise ConfigurationError(f"invalid memory rules: {exc}") from exc
        return self

    def with_demotion(self, policy: DemotionPolicy) -> Self:
        self._demotion = policy
        return self

    def with_entities(
        self,
        store: EntityStore | None,
        extractor: EntityExtractor | None = None,
        aliases: dict[str, str] | None = None,
    ) -> Self:
        """Entity memory filled during spills, kept in ``store``, found by ``extractor``
        (spaCy's when None) and resolved with the configured ``aliases``; a None store
        switches it off."""
        self._entity_store, self._extractor = store, extractor
        self._aliases = dict(aliases or {})
        return self

    def with_episodes(self, store: EpisodeStore | None) -> Self:
        """Episodic memory (tasks, steps, episodes) kept in ``store``; None switches it
        off."""
        self._episode_store = store
        return self

    def with_types(
        self,
        profiles: ProfileStore,
        conversation: ConversationStore,
        personas: dict[str, PersonaConfig] | None = None,
    ) -> Self:
        """Stores for personas, structured records and short-term history: with them,
        the built memory carries the MemoryManager router as ``memory.manager``."""
        self._profiles, self._conversation = profiles, conversation
        self._personas = dict(personas or {})
        return self

    def with_working(self, store: WorkingStore | None) -> Self:
        """Where tasks' working memory lives (Redis, shared by every replica)."""
        self._working = store
        return self

    def with_leases(self, leases: Leases | None) -> Self:
        """Leases that let one replica at a time run the maintenance loop; None: this
        process runs it whatever the others do."""
        self._leases = leases
        return self

    def with_admission(self, store: AdmissionStore | None, limits: AdmissionLimits) -> Self:
        """Rate limits and quotas per tenant, counted in ``store`` (Redis) so that every
        replica enforces the same limit; without a store nothing is limited."""
        self._admission, self._admission_limits = store, limits
        return self

    def with_queue(self, queue: EnrichmentQueue | None) -> Self:
        """The enrichment queue: with it, every add is written behind into the graph by a
        worker (``memory.worker``, or ``graphmem worker`` processes)."""
        self._queue = queue
        return self

    def with_scope_cache(
        self,
        versions: ScopeVersions | None,
        max_bytes: int = 256 * 2**20,
        scope_limit: int = 20_000,
    ) -> Self:
        """Keep search scopes' vectors in memory, kept exact by the scope versions in
        ``versions`` (Redis, shared by every replica); None searches the graph alone."""
        self._versions = versions
        self._cache_bytes, self._cache_scope_limit = max_bytes, scope_limit
        return self

    def with_events(self, events: EventBus | None) -> Self:
        """Publish the change feed (Redis pub/sub) from the built service."""
        self._events = events
        return self

    def with_metrics(self, metrics: Metrics) -> Self:
        self._metrics = metrics
        return self

    def build(self) -> Memory:
        problems = []
        if self._hot is None:
            problems.append("no hot tier: call with_hot(...)")
        elif not isinstance(self._hot, HotTier):
            problems.append(f"{type(self._hot).__name__} does not implement the HotTier protocol")
        if self._graph is None:
            problems.append("no graph store: call with_graph(...)")
        elif not isinstance(self._graph, GraphStore):
            problems.append(
                f"{type(self._graph).__name__} does not implement the GraphStore protocol"
            )
        if self._embedder is None:
            problems.append("no embedder: call with_embedder(...)")
        elif not isinstance(self._embedder, Embedder):
            problems.append(
                f"{type(self._embedder).__name__} does not implement the Embedder protocol"
            )
        if self._demotion is not None and not isinstance(self._demotion, DemotionPolicy):
            problems.append(
                f"{type(self._demotion).__name__} does not implement the DemotionPolicy protocol"
            )
        if problems:
            raise ConfigurationError("cannot build the memory service: " + "; ".join(problems))
        assert self._hot is not None and self._graph is not None and self._embedder is not None
        if self._rules.hot_ttl is not None:
            try:
                self._config.merged(session_ttl_seconds=self._rules.hot_ttl)
            except ValueError as exc:
                raise ConfigurationError(f"hot_ttl does not fit the memory config: {exc}") from exc
        return self._compose(self._hot, self._graph, self._embedder)

    def _compose(self, hot: HotTier, graph: GraphStore, embedder: Embedder) -> Memory:
        """Every capability, each built with the collaborators it needs (nothing is
        connected after construction)."""
        rules = self._rules
        config = self._config
        if rules.hot_ttl is not None:
            config = config.merged(session_ttl_seconds=rules.hot_ttl)
        hot.ttl = config.session_ttl_seconds
        metrics = self._metrics or Metrics()
        events: EventBus | NullBus = self._events or NullBus()
        queue, versions = self._queue, self._versions
        space = EmbeddingSpace.of(embedder)
        entities = (
            EntityMemory(
                self._entity_store,
                self._extractor or EntityExtractor(),
                aliases=self._aliases,
                events=events,
            )
            if self._entity_store is not None
            else None
        )
        changes = ScopeChanges(versions)
        inputs = Inputs(self._limits)
        sessions = Sessions(hot, config)

        async def workers_alive() -> bool:
            assert queue is not None
            return await queue.workers(EnrichmentWorker.silent_after_seconds) > 0

        enrichment = Enrichment(
            hot, embedder, entities, workers_alive if queue is not None else None
        )
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
        admission = Admission(self._admission, self._admission_limits, metrics, exact_usage)
        # The memory types publish to the same change feed and share working memory.
        working = WorkingMemory(self._working, quota=admission)
        spaces = TenantSpaces(graph.spaces, space)
        episodes = (
            EpisodicMemory(
                self._episode_store,
                embedder,
                events=events,
                working=working,
                quota=admission,
                spaces=spaces,
            )
            if self._episode_store is not None
            else None
        )
        ingest = Ingest(
            inputs,
            sessions,
            hot,
            graph,
            self._tokens or TokenCounter(),
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
            graph.search, versions, embedder.dimension, self._cache_bytes, self._cache_scope_limit
        )
        metrics.search_cache_bytes.set_function(lambda: cache.held_bytes)
        weights = weights_for(embedder.name)
        ranker = Ranker(
            inputs, graph, embedder, weights, entities, cache, self._query_embedder, spaces
        )
        recall = Recall(
            ranker, hot, graph, sessions, enrichment, promotion, metrics, events, changes
        )
        manager = (
            MemoryManager(
                ingest,
                spills,
                recall,
                working,
                config,
                self._profiles,
                self._conversation,
                self._personas,
                episodes,
                entities,
                quota=admission,
            )
            if self._profiles is not None and self._conversation is not None
            else None
        )
        demotion = self._demotion or IdleWarmDemotion(
            timedelta(seconds=config.demote_after_idle_seconds)
        )
        return Memory(
            hot_tier=hot,
            graph=graph,
            embedder=embedder,
            tokens=ingest.tokens,
            rules=rules,
            config=config,
            limits=self._limits,
            metrics=metrics,
            weights=weights,
            events=events,
            entities=entities,
            episodes=episodes,
            working=working,
            manager=manager,
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
            reports=reports,
            listing=Listing(inputs, hot, graph),
            maintenance=Maintenance(
                hot, graph, sessions, spills, demotion, config, changes, self._leases
            ),
        )

    @classmethod
    def from_settings(cls, settings: Settings, *, enriches: bool = False) -> MemoryBuilder:
        """A builder wired to the services the settings point at; ``enriches``: for a
        process whose work is enrichment (``graphmem worker``), which embeds in batches."""
        hot = RedisHotTier.connect(
            settings.resolved_redis_url,
            settings.memory.session_ttl_seconds,
            cluster=settings.redis_cluster,
            wait_replicas=settings.redis_wait_replicas,
            wait_timeout_ms=settings.redis_wait_timeout_ms,
        )
        graph = Neo4jGraphStore.connect(
            settings.resolved_neo4j_uri,
            settings.neo4j_user,
            settings.neo4j_password,
            library(),
            settings.neo4j_database,
            SharedBookmarks(hot.client).manager() if settings.uses_shared_bookmarks else None,
        )
        extractor = EntityExtractor() if settings.entities_enabled else None
        embedder = shared_embedder(
            settings.embedder,
            settings.embed_threads,
            arena=settings.embed_arena(batches=enriches or not settings.write_behind),
            models_dir=settings.models_dir,
        )
        threads = settings.query_embed_threads
        query_embedder = (
            shared_embedder(
                settings.embedder,
                threads,
                arena=settings.embed_arena(batches=False),
                models_dir=settings.models_dir,
            )
            if settings.embedder != "minilm-fp32" and threads and threads != settings.embed_threads
            else None
        )
        conversation = RedisConversationStore(hot.client, settings.memory.short_term_max_messages)
        return (
            cls()
            .with_hot(hot)
            .with_graph(graph)
            .with_entities(
                Neo4jEntityStore(graph) if extractor is not None else None,
                extractor,
                settings.entity_aliases,
            )
            .with_embedder(embedder)
            .with_query_embedder(query_embedder)
            .with_episodes(Neo4jEpisodeStore(graph))
            .with_types(Neo4jProfileStore(graph), conversation, settings.personas)
            .with_events(EventBus(hot.client))
            .with_working(RedisWorkingStore(hot.client))
            .with_leases(RedisLeases(hot.client))
            .with_queue(
                RedisEnrichmentQueue(hot.client, tenant_items=settings.enrich_tenant_items)
                if settings.write_behind
                else None
            )
            .with_scope_cache(
                RedisScopeVersions(hot.client),
                settings.search_cache_mb * 2**20,
                settings.search_cache_scope_limit,
            )
            .with_admission(
                RedisAdmission(hot.client),
                AdmissionLimits(
                    cost_per_second=settings.rate_limit_per_second,
                    expensive_cost=settings.expensive_cost,
                    concurrent_expensive=settings.max_concurrent_expensive,
                    max_memories=settings.quota_memories,
                    max_bytes=settings.quota_bytes,
                    later_seconds_per_kb=settings.fair_later_seconds_per_kb,
                ),
            )
            .with_config(settings.memory)
            .with_limits(
                Limits(
                    max_content_chars=settings.max_content_chars,
                    max_batch_items=settings.max_batch_items,
                )
            )
        )
