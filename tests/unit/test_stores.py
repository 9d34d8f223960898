"""The stores meet their protocols."""

from __future__ import annotations

from unittest.mock import MagicMock

from graphmem.stores import ConversationStore, EntityStore, EpisodeStore, ProfileStore
from graphmem.stores.neo4j.entities import Neo4jEntityStore
from graphmem.stores.neo4j.episodes import Neo4jEpisodeStore
from graphmem.stores.neo4j.profiles import Neo4jProfileStore
from graphmem.stores.redis.conversation import RedisConversationStore


def test_the_concrete_stores_implement_their_protocols() -> None:
    graph = MagicMock()
    assert isinstance(Neo4jEntityStore(graph), EntityStore)
    assert isinstance(Neo4jEpisodeStore(graph), EpisodeStore)
    assert isinstance(Neo4jProfileStore(graph), ProfileStore)
    assert isinstance(RedisConversationStore(MagicMock()), ConversationStore)
