"""Which vector index a tenant-wide nearest-neighbour probe goes through, and how far
it over-fetches there.

Every memory is in the shared index (``memory_embedding``). A probe of it returns the
nearest nodes of every tenant and is then filtered to the caller's; near a query, other
tenants may hold most of the neighbours (the same topics, the same texts), and the probe
has to be widened until enough of the tenant's own are left (docs/recall.md#tenant-scope).
So a tenant with more than ``own_index_above`` memories gets a vector index of its own,
over the label its memories already carry for their fulltext index: once Neo4j has
populated it (in its background), its probes go there and need no over-fetch. Smaller
tenants stay on the shared index, their probes sized by their share of it.

The choice is remade in the background at most once a minute per tenant and process
(counting a large tenant takes a label scan, ~0.1 s per 100,000 memories); it never
decides a result, only which index answers and how wide the first probe is. Both
indexes hold all of the tenant's embedded memories, so a process that still uses the
shared one is as correct as one that moved on.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

from neo4j.exceptions import ClientError

from graphmem.domain.models import tenant_vector_index
from graphmem.errors import GraphmemError
from graphmem.stores.neo4j.fulltext import TenantFulltext, create_tenant_index
from graphmem.stores.neo4j.session import Neo4jSession

log = logging.getLogger("graphmem.search")

SHARED_INDEX = "memory_embedding"


@dataclass(frozen=True)
class VectorIndexChoice:
    #: the index a tenant-wide probe queries
    name: str
    #: the tenant's share of that index's nodes (1 in its own)
    share: float


class TenantVectorIndexes:
    #: a tenant with more memories than this gets a vector index of its own
    own_index_above = 20_000
    #: how long a choice holds before it is made again
    refresh_seconds = 60.0

    def __init__(self, session: Neo4jSession, fulltext: TenantFulltext) -> None:
        self._session = session
        self._fulltext = fulltext
        self._held: dict[str, tuple[VectorIndexChoice, float]] = {}
        self._choosing: dict[str, asyncio.Future[VectorIndexChoice | None]] = {}

    def current(self, tenant: str, dimension: int) -> VectorIndexChoice:
        """The choice held for the tenant (the shared index, unshared, until the first
        one lands), starting a new one in the background when it is due."""
        held = self._held.get(tenant)
        if (held is None or held[1] <= time.monotonic()) and tenant not in self._choosing:
            running = asyncio.ensure_future(self.choose(tenant, dimension))
            self._choosing[tenant] = running
            running.add_done_callback(lambda _: self._choosing.pop(tenant, None))
        return held[0] if held is not None else VectorIndexChoice(SHARED_INDEX, 1.0)

    async def choose(self, tenant: str, dimension: int) -> VectorIndexChoice | None:
        """Count the tenant, create its own index when it has outgrown the shared one,
        and hold the choice; None (and the last choice kept) when Neo4j failed."""
        try:
            _, label = await self._fulltext.ensure(tenant)
            (row,) = await self._session.run("memory/index_share", {"label": label})
            mine, total = int(row["mine"]), int(row["total"])
            choice = VectorIndexChoice(SHARED_INDEX, max(0.01, min(1.0, mine / max(1, total))))
            if mine > self.own_index_above and await self._own_is_online(tenant, label, dimension):
                choice = VectorIndexChoice(tenant_vector_index(tenant), 1.0)
        except (GraphmemError, ClientError) as exc:
            log.warning("could not choose the vector index of %s: %s", tenant, exc)
            return None
        if len(self._held) > 10_000:
            self._held.clear()
        self._held[tenant] = (choice, time.monotonic() + self.refresh_seconds)
        return choice

    async def _own_is_online(self, tenant: str, label: str, dimension: int) -> bool:
        """Whether the tenant's own index can answer; created (to be populated in Neo4j's
        background) when missing."""
        name = tenant_vector_index(tenant)
        states = await self._session.run("admin/index_state", {"names": [name]})
        if states:
            return bool(states[0]["state"] == "ONLINE")
        await create_tenant_index(
            self._session, "tenant/vector_index", name, label, {"dimension": dimension}
        )
        log.info("creating the vector index of tenant %s (%s)", tenant, name)
        return False
