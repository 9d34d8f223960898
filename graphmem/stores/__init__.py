"""The stores behind the memory service, each behind a protocol so it can be swapped.

The protocols of the tiers and of what coordinates them are in ``protocols.py``, those
of the other memory kinds in ``protocols_kinds.py``; the typed rows the stores return
in ``models.py``. Redis implements some (``redis/``), Neo4j the others (``neo4j/``).
"""

from __future__ import annotations

from graphmem.stores.protocols import (
    AdmissionStore,
    ChangeFeed,
    EnrichmentQueue,
    GraphScans,
    GraphSearch,
    GraphSpaces,
    GraphStore,
    HotTier,
    Leases,
    ScopeVersions,
    SessionIndex,
    SessionLocks,
)
from graphmem.stores.protocols_kinds import (
    ConversationStore,
    EntityStore,
    EpisodeStore,
    GraphErasure,
    ItemStore,
    KindErasure,
    KnowledgeStore,
    ProfileStore,
    WorkingStore,
)

__all__ = [
    "AdmissionStore",
    "ChangeFeed",
    "ConversationStore",
    "EnrichmentQueue",
    "EntityStore",
    "EpisodeStore",
    "GraphErasure",
    "GraphScans",
    "GraphSearch",
    "GraphSpaces",
    "GraphStore",
    "HotTier",
    "ItemStore",
    "KindErasure",
    "KnowledgeStore",
    "Leases",
    "ProfileStore",
    "ScopeVersions",
    "SessionIndex",
    "SessionLocks",
    "WorkingStore",
]
