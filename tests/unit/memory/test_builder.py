"""MemoryBuilder assembly and validation (no services are contacted)."""

from __future__ import annotations

from datetime import datetime

import pytest

from graphmem.enrich.minilm import MiniLMInt8Embedder
from graphmem.errors import ConfigurationError
from graphmem.memory import Memory
from graphmem.memory.builder import MemoryBuilder
from graphmem.memory.policy import IdleWarmDemotion, MemoryRules
from graphmem.stores import GraphStore, HotTier
from graphmem.stores.neo4j.graph import Neo4jGraphStore
from graphmem.stores.neo4j.library import library
from graphmem.stores.redis.hot import RedisHotTier


@pytest.fixture(scope="module")
def embedder() -> MiniLMInt8Embedder:
    return MiniLMInt8Embedder(threads=1)


def tiers() -> tuple[RedisHotTier, Neo4jGraphStore]:
    # Neither client connects before its first command.
    return (
        RedisHotTier.connect("redis://127.0.0.1:1/0"),
        Neo4jGraphStore.connect("bolt://127.0.0.1:1", "neo4j", "x", library()),
    )


def test_complete_build_gives_a_service_with_the_parts(embedder: MiniLMInt8Embedder) -> None:
    hot, graph = tiers()
    service = (
        MemoryBuilder()
        .with_hot(hot)
        .with_graph(graph)
        .with_embedder(embedder)
        .with_config(hotTokenLimit=123)
        .with_rules(write_through=True, hot_ttl=600)
        .build()
    )
    assert isinstance(service, Memory)
    assert service.hot_tier is hot and service.graph is graph and service.embedder is embedder
    assert service.config.hot_token_limit == 123
    assert service.rules == MemoryRules(write_through=True, hot_ttl=600)
    assert hot.ttl == 600  # the rule reaches the tier
    assert isinstance(hot, HotTier) and isinstance(graph, GraphStore)


@pytest.mark.parametrize(
    ("parts", "message"),
    [
        ({"graph", "embedder"}, "no hot tier"),
        ({"hot", "embedder"}, "no graph store"),
        ({"hot", "graph"}, "no embedder"),
        (set(), "no hot tier: call with_hot"),
    ],
)
def test_partial_configurations_name_what_is_missing(
    embedder: MiniLMInt8Embedder, parts: set[str], message: str
) -> None:
    hot, graph = tiers()
    builder = MemoryBuilder()
    if "hot" in parts:
        builder.with_hot(hot)
    if "graph" in parts:
        builder.with_graph(graph)
    if "embedder" in parts:
        builder.with_embedder(embedder)
    with pytest.raises(ConfigurationError, match=message):
        builder.build()


def test_objects_that_are_not_tiers_are_rejected(embedder: MiniLMInt8Embedder) -> None:
    class NotATier:
        async def get(self, key: str) -> None: ...

    with pytest.raises(ConfigurationError) as err:
        MemoryBuilder().with_hot(NotATier()).with_graph(NotATier()).with_embedder(  # type: ignore[arg-type]
            object()  # type: ignore[arg-type]
        ).build()
    text = str(err.value)
    assert "NotATier does not implement the HotTier protocol" in text
    assert "NotATier does not implement the GraphStore protocol" in text
    assert "object does not implement the Embedder protocol" in text


@pytest.mark.parametrize(
    "rules",
    [
        {"promote_on_read": True, "read_fallback": False},
        {"write_through": "yes"},
        {"hot_ttl": 0},
        {"hot_ttl": 1.5},
        {"no_such_rule": True},
    ],
)
def test_bad_rule_values(rules: dict[str, object]) -> None:
    with pytest.raises(ConfigurationError, match="invalid memory rules"):
        MemoryBuilder().with_rules(**rules)


def test_bad_config_values() -> None:
    with pytest.raises(ConfigurationError, match="invalid memory config"):
        MemoryBuilder().with_config(promoteThreshold=2)
    with pytest.raises(ConfigurationError, match="invalid memory config"):
        MemoryBuilder().with_config(sessionTtlSeconds=100, flushBeforeExpirySeconds=200)


def test_hot_ttl_must_leave_room_to_flush(embedder: MiniLMInt8Embedder) -> None:
    hot, graph = tiers()
    builder = (
        MemoryBuilder()
        .with_hot(hot)
        .with_graph(graph)
        .with_embedder(embedder)
        .with_config(flushBeforeExpirySeconds=600)
        .with_rules(hot_ttl=300)
    )
    with pytest.raises(ConfigurationError, match="hot_ttl does not fit"):
        builder.build()


def test_demotion_policy_is_pluggable(embedder: MiniLMInt8Embedder) -> None:
    class KeepEverything:
        async def demote(self, graph: GraphStore, tenant: str, now: datetime) -> list[str]:
            return []

    hot, graph = tiers()
    base = MemoryBuilder().with_hot(hot).with_graph(graph).with_embedder(embedder)
    policy = KeepEverything()
    assert base.with_demotion(policy).build().maintenance.demotion is policy
    default = MemoryBuilder().with_hot(hot).with_graph(graph).with_embedder(embedder).build()
    assert isinstance(default.maintenance.demotion, IdleWarmDemotion)
    with pytest.raises(ConfigurationError, match="DemotionPolicy"):
        base.with_demotion(object()).build()  # type: ignore[arg-type]
