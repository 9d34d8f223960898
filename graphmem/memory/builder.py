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
The builder collects and checks the parts; ``compose.py`` builds the capabilities from
them.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Self

from graphmem.enrich.embed import Embedder
from graphmem.enrich.embedders import make_embedder
from graphmem.enrich.ner import EntityExtractor
from graphmem.enrich.tokens import TokenCounter
from graphmem.errors import ConfigurationError
from graphmem.memory.compose import Parts, compose
from graphmem.memory.facade import Memory
from graphmem.memory.inputs import Limits
from graphmem.memory.policy import DemotionPolicy, MemoryRules
from graphmem.memory.tiers.admission import AdmissionLimits
from graphmem.metrics import Metrics
from graphmem.receiptkey import receipt_key
from graphmem.settings import MemoryConfig, PersonaConfig, Settings
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
from graphmem.stores.neo4j.entities import Neo4jEntityStore
from graphmem.stores.neo4j.episodes import Neo4jEpisodeStore
from graphmem.stores.neo4j.erasure_kinds import Neo4jKindErasure
from graphmem.stores.neo4j.graph import Neo4jGraphStore
from graphmem.stores.neo4j.items import Neo4jItemStore
from graphmem.stores.neo4j.knowledge import Neo4jKnowledgeStore
from graphmem.stores.neo4j.library import library
from graphmem.stores.neo4j.profiles import Neo4jProfileStore
from graphmem.stores.redis.admission import RedisAdmission
from graphmem.stores.redis.bookmarks import SharedBookmarks
from graphmem.stores.redis.conversation import RedisConversationStore
from graphmem.stores.redis.events import EventBus
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
        self._parts = Parts()

    def with_hot(self, hot: HotTier) -> Self:
        self._parts.hot = hot
        return self

    def with_graph(self, graph: GraphStore) -> Self:
        self._parts.graph = graph
        return self

    def with_embedder(self, embedder: Embedder) -> Self:
        self._parts.embedder = embedder
        return self

    def with_query_embedder(self, embedder: Embedder | None) -> Self:
        """An embedder for search queries alone (None: the one ``with_embedder`` set);
        it must produce the same vectors."""
        self._parts.query_embedder = embedder
        return self

    def with_tokens(self, tokens: TokenCounter) -> Self:
        self._parts.tokens = tokens
        return self

    def with_config(self, config: MemoryConfig | None = None, **overrides: Any) -> Self:
        """The tier settings; keyword overrides accept either naming style."""
        try:
            self._parts.config = (config or self._parts.config).merged(**overrides)
        except ValueError as exc:
            raise ConfigurationError(f"invalid memory config: {exc}") from exc
        return self

    def with_limits(self, limits: Limits) -> Self:
        self._parts.limits = limits
        return self

    def with_rules(self, **rules: Any) -> Self:
        """read_fallback, promote_on_read, write_through (bools), hot_ttl (seconds)."""
        try:
            self._parts.rules = MemoryRules.model_validate(
                {**self._parts.rules.model_dump(), **rules}
            )
        except ValueError as exc:
            raise ConfigurationError(f"invalid memory rules: {exc}") from exc
        return self

    def with_demotion(self, policy: DemotionPolicy) -> Self:
        self._parts.demotion = policy
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
        self._parts.entity_store, self._parts.extractor = store, extractor
        self._parts.aliases = dict(aliases or {})
        return self

    def with_knowledge_graph(self, store: KnowledgeStore | None) -> Self:
        """The knowledge graph of the MCP memory-server tools, kept in ``store``; None
        switches it off."""
        self._parts.knowledge_store = store
        return self

    def with_episodes(self, store: EpisodeStore | None) -> Self:
        """Episodic memory (tasks, steps, episodes) kept in ``store``; None switches it
        off."""
        self._parts.episode_store = store
        return self

    def with_kind_erasure(self, store: KindErasure | None) -> Self:
        """Where forgetTask and forgetRecords erase (the graph holding tasks and records);
        None: they answer UNAVAILABLE and forgetUser leaves tasks alone."""
        self._parts.kind_erasure = store
        return self

    def with_types(
        self,
        profiles: ProfileStore,
        conversation: ConversationStore,
        personas: dict[str, PersonaConfig] | None = None,
    ) -> Self:
        """Stores for personas, structured records and short-term history: with them,
        the built memory carries the MemoryManager router as ``memory.manager``."""
        self._parts.profiles, self._parts.conversation = profiles, conversation
        self._parts.personas = dict(personas or {})
        return self

    def with_items(self, store: ItemStore | None) -> Self:
        """Where LangGraph store items live (the graph): with it, the built memory
        carries ``memory.items``."""
        self._parts.items = store
        return self

    def with_working(self, store: WorkingStore | None) -> Self:
        """Where tasks' working memory lives (Redis, shared by every replica)."""
        self._parts.working = store
        return self

    def with_receipts(self, key: bytes, tombstone_days: float = 30.0) -> Self:
        """The key erasure receipts are signed with (every replica needs the same), and
        how long a tombstone keeps an erased subject out (docs/concepts.md#erasure)."""
        self._parts.receipt_key, self._parts.tombstone_days = key, tombstone_days
        return self

    def with_leases(self, leases: Leases | None) -> Self:
        """Leases that let one replica at a time run the maintenance loop; None: this
        process runs it whatever the others do."""
        self._parts.leases = leases
        return self

    def with_admission(self, store: AdmissionStore | None, limits: AdmissionLimits) -> Self:
        """Rate limits and quotas per tenant, counted in ``store`` (Redis) so that every
        replica enforces the same limit; without a store nothing is limited."""
        self._parts.admission, self._parts.admission_limits = store, limits
        return self

    def with_queue(self, queue: EnrichmentQueue | None) -> Self:
        """The enrichment queue: with it, every add is written behind into the graph by a
        worker (``memory.worker``, or ``graphmem worker`` processes)."""
        self._parts.queue = queue
        return self

    def with_scope_cache(
        self,
        versions: ScopeVersions | None,
        max_bytes: int = 256 * 2**20,
        scope_limit: int = 20_000,
    ) -> Self:
        """Keep search scopes' vectors in memory, kept exact by the scope versions in
        ``versions`` (Redis, shared by every replica); None searches the graph alone."""
        self._parts.versions = versions
        self._parts.cache_bytes, self._parts.cache_scope_limit = max_bytes, scope_limit
        return self

    def with_events(self, events: ChangeFeed | None) -> Self:
        """Publish the change feed (Redis pub/sub) from the built service."""
        self._parts.events = events
        return self

    def with_metrics(self, metrics: Metrics) -> Self:
        self._parts.metrics = metrics
        return self

    def build(self) -> Memory:
        parts = self._parts
        problems = []
        if parts.hot is None:
            problems.append("no hot tier: call with_hot(...)")
        elif not isinstance(parts.hot, HotTier):
            problems.append(f"{type(parts.hot).__name__} does not implement the HotTier protocol")
        if parts.graph is None:
            problems.append("no graph store: call with_graph(...)")
        elif not isinstance(parts.graph, GraphStore):
            problems.append(
                f"{type(parts.graph).__name__} does not implement the GraphStore protocol"
            )
        if parts.embedder is None:
            problems.append("no embedder: call with_embedder(...)")
        elif not isinstance(parts.embedder, Embedder):
            problems.append(
                f"{type(parts.embedder).__name__} does not implement the Embedder protocol"
            )
        if parts.demotion is not None and not isinstance(parts.demotion, DemotionPolicy):
            problems.append(
                f"{type(parts.demotion).__name__} does not implement the DemotionPolicy protocol"
            )
        if problems:
            raise ConfigurationError("cannot build the memory service: " + "; ".join(problems))
        assert parts.hot is not None and parts.graph is not None and parts.embedder is not None
        if parts.rules.hot_ttl is not None:
            try:
                parts.config.merged(session_ttl_seconds=parts.rules.hot_ttl)
            except ValueError as exc:
                raise ConfigurationError(f"hot_ttl does not fit the memory config: {exc}") from exc
        return compose(parts, parts.hot, parts.graph, parts.embedder)

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
        arena = settings.embed_arena(batches=enriches or not settings.write_behind)
        embedder = shared_embedder(
            settings.embedder, settings.embed_threads, arena=arena, models_dir=settings.models_dir
        )
        threads, query_arena = settings.query_embed_threads, settings.embed_arena(batches=False)
        # a session of its own for queries only where they would run differently
        query_embedder = (
            shared_embedder(
                settings.embedder, threads, arena=query_arena, models_dir=settings.models_dir
            )
            if settings.embedder != "minilm-fp32"
            and threads
            and (threads, query_arena) != (settings.embed_threads, arena)
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
            .with_kind_erasure(Neo4jKindErasure(graph))
            .with_knowledge_graph(Neo4jKnowledgeStore(graph))
            .with_types(Neo4jProfileStore(graph), conversation, settings.personas)
            .with_items(Neo4jItemStore(graph))
            .with_events(EventBus(hot.client))
            .with_working(RedisWorkingStore(hot.client))
            .with_leases(RedisLeases(hot.client))
            .with_receipts(receipt_key(settings), settings.tombstone_days)
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
