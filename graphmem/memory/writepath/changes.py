"""What every write path tells the other replicas after it changed memories in the graph.

Search keeps each scope's vectors in memory (``scopecache.py``); that is safe only if
every change to a graph memory bumps the versions of the scopes holding it (its tenant,
its session, its user; ``stores/redis/versions.py``). The write paths of ``graphmem/
memory`` call ``ScopeChanges`` after the graph acknowledged the write, never before: a
search that reads the new version then also finds the write in the graph.

Call ``written`` for memories added, updated (tier, embedding, sentence vectors) or
deleted, and ``everything`` when the memories changed are not known one by one. A write
that sets a memory's ``embedding`` sets ``vectorBytes`` beside it
(``stores/neo4j/rows.py``; ``memory/upsert_batch`` does): views read those bytes, and
fall back to decoding the list of floats, a hundred times slower, where they are
missing. Without a version store (a service built without one) nothing is cached, and
these do nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

from graphmem.domain.models import MemoryItem
from graphmem.stores import ScopeVersions
from graphmem.stores.models import Located


def scope_key(session_id: str | None, user_id: str | None) -> str:
    """The version key of the scope a search asks for: its session when it names one
    (a session's memories are few; the user, if also given, filters within it), else
    its user, else the tenant."""
    if session_id is not None:
        return f"s:{session_id}"
    if user_id is not None:
        return f"u:{user_id}"
    return "t"


class ScopeChanges:
    def __init__(self, versions: ScopeVersions | None) -> None:
        self.versions = versions

    async def written(self, tenant: str, memories: Iterable[Located]) -> None:
        """Bump the tenant, session and user scopes of memories just written or
        deleted, each with the ids it changed."""
        if self.versions is None:
            return
        scopes: dict[str, list[str]] = {}
        for item_id, session_id, user_id in memories:
            scopes.setdefault("t", []).append(item_id)
            if session_id is not None:
                scopes.setdefault(f"s:{session_id}", []).append(item_id)
            if user_id is not None:
                scopes.setdefault(f"u:{user_id}", []).append(item_id)
        if scopes:
            await self.versions.bump(tenant, scopes)

    async def items(self, tenant: str, items: Iterable[MemoryItem]) -> None:
        await self.written(tenant, ((i.id, i.session_id, i.user_id) for i in items))

    async def everything(self, tenant: str) -> None:
        """Every cached scope of the tenant is rebuilt on its next search."""
        if self.versions is not None:
            await self.versions.bump(tenant, {}, everything=True)
