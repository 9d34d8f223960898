"""The in-memory stores meet the contracts the real ones meet
(``tests/integration/test_store_contracts.py`` runs the same against Redis and Neo4j)."""

from __future__ import annotations

import pytest

from graphmem.stores import EnrichmentQueue, GraphStore, HotTier, KnowledgeStore, Leases
from tests.support.contracts.graph import GraphSetup, GraphStoreContract
from tests.support.contracts.hot import HotSetup, HotTierContract
from tests.support.contracts.knowledge import KnowledgeStoreContract
from tests.support.contracts.leases import LeasesContract, LeasesSetup
from tests.support.contracts.queue import EnrichmentQueueContract, QueueSetup
from tests.support.contracts.versions import ScopeVersionsContract, VersionsSetup
from tests.support.enrich import HashEmbedder
from tests.support.fakes.clock import ManualClock
from tests.support.fakes.graph import FakeGraphStore
from tests.support.fakes.hot import FakeHotTier
from tests.support.fakes.knowledge import FakeKnowledgeStore
from tests.support.fakes.leases import FakeLeases
from tests.support.fakes.queue import FakeEnrichmentQueue
from tests.support.fakes.versions import FakeScopeVersions


class TestFakeHotTier(HotTierContract):
    @pytest.fixture
    def hot_setup(self) -> HotSetup:
        clock = ManualClock()
        return HotSetup(FakeHotTier(clock=clock), clock.elapse, clock)


class TestFakeGraphStore(GraphStoreContract):
    @pytest.fixture
    def graph_setup(self) -> GraphSetup:
        return GraphSetup(FakeGraphStore(), HashEmbedder(384))


class TestFakeScopeVersions(ScopeVersionsContract):
    @pytest.fixture
    def versions_setup(self) -> VersionsSetup:
        versions = FakeScopeVersions()
        return VersionsSetup(versions, versions.log_length)


class TestFakeEnrichmentQueue(EnrichmentQueueContract):
    @pytest.fixture
    def queue_setup(self) -> QueueSetup:
        clock = ManualClock()
        return QueueSetup(FakeEnrichmentQueue(clock), clock.elapse)


class TestFakeLeases(LeasesContract):
    @pytest.fixture
    def leases_setup(self) -> LeasesSetup:
        clock = ManualClock()
        return LeasesSetup(FakeLeases(clock), clock.elapse)


class TestFakeKnowledgeStore(KnowledgeStoreContract):
    @pytest.fixture
    def knowledge_store(self) -> KnowledgeStore:
        return FakeKnowledgeStore()


def test_the_fakes_implement_the_store_protocols() -> None:
    hot, graph = FakeHotTier(), FakeGraphStore()
    assert isinstance(hot, HotTier) and isinstance(graph, GraphStore)
    assert isinstance(FakeEnrichmentQueue(), EnrichmentQueue)
    assert isinstance(FakeLeases(), Leases)
    assert isinstance(FakeKnowledgeStore(), KnowledgeStore)
