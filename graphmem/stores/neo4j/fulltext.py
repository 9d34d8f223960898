"""One fulltext index per tenant, so BM25's term statistics are the tenant's own.

Lucene keeps document frequencies and average field lengths per index. With one index
over every tenant, a tenant could learn which words another tenant's memories contain by
watching its own scores move. Each tenant's memories carry a label of their own
(``models.tenant_fulltext``), and their LangGraph store items another
(``models.tenant_item_fulltext``), each with an index over it.

The indexes of the tenants an API serves are made when it starts (``provision``), not
when a tenant first writes: creating (or dropping) any index makes Neo4j drop every
cached query plan, and each statement of every tenant is planned again on its next run
(0.03-0.18 s each, measured: bench/neighbours.py's new tenant B took every other
tenant's next search to 0.4-0.8 s). A tenant that reaches the store without having been
provisioned (a command-line import into a new tenant) still gets its index on first use,
with a warning. Creating is idempotent (IF NOT EXISTS, which changes nothing when the
index is there), so several processes may race to do it.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Iterable
from typing import Any

from neo4j.exceptions import ClientError

from graphmem.domain.models import tenant_fulltext, tenant_item_fulltext
from graphmem.stores.neo4j.records import index_states
from graphmem.stores.neo4j.session import Neo4jSession

log = logging.getLogger("graphmem.graph")

_NAME = re.compile(r"[A-Za-z0-9_]{1,64}")
MIGRATION = "tenant-fulltext-indexes"
_ALREADY_THERE = (
    "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists",
    "Neo.ClientError.Schema.IndexAlreadyExists",
)


async def create_tenant_index(
    session: Neo4jSession, ddl: str, index: str, label: str, params: dict[str, Any]
) -> None:
    """Run a per-tenant index's DDL (``cypher/tenant``), its ``__INDEX__`` and
    ``__LABEL__`` replaced by names derived from a hash of the tenant. Schema commands
    take no parameters for names, so the names are checked to be plain identifiers."""
    if not (_NAME.fullmatch(index) and _NAME.fullmatch(label)):  # pragma: no cover
        raise ValueError("tenant index names must be plain identifiers")
    statement = session.cypher[ddl].replace("__INDEX__", index).replace("__LABEL__", label)
    try:
        await session.run_schema(statement, params)
    except ClientError as exc:
        # IF NOT EXISTS does not cover a creation racing in another transaction
        # (another request, another replica): that one made the same index.
        if exc.code not in _ALREADY_THERE:
            raise


#: each tenant's fulltext indexes: (DDL in cypher/tenant, the index's and label's names)
TENANT_INDEXES = (
    ("tenant/fulltext_index", tenant_fulltext),
    ("tenant/item_fulltext_index", tenant_item_fulltext),
)


async def provision(session: Neo4jSession, tenants: Iterable[str]) -> list[str]:
    """Create the fulltext indexes of ``tenants`` that do not exist yet, and wait until
    they are online; the names of those created. Asking first keeps a start with every
    index in place free of schema commands."""
    wanted = {
        index: (ddl, label)
        for tenant in sorted(set(tenants))
        for ddl, names in TENANT_INDEXES
        for index, label in (names(tenant),)
    }
    if not wanted:
        return []
    present = index_states(await session.run("admin/index_state", {"names": list(wanted)}))
    missing = [index for index in wanted if index not in present]
    for index in missing:
        ddl, label = wanted[index]
        await create_tenant_index(session, ddl, index, label, {})
    if missing:
        await session.run("admin/await_indexes", {"timeoutSeconds": 300})
    return missing


class TenantFulltext:
    def __init__(self, session: Neo4jSession) -> None:
        self._session = session
        self._ready: set[str] = set()
        self._lock = asyncio.Lock()

    async def ensure(self, tenant: str) -> tuple[str, str]:
        """The tenant's index and label, the index created (and online) if it was not."""
        index, label = tenant_fulltext(tenant)
        if tenant in self._ready:
            return index, label
        if not await self._session.run("admin/index_state", {"names": [index]}):
            log.warning(
                "tenant %s was not provisioned at start: its fulltext index is created now,"
                " and Neo4j plans every query of every tenant again (docs/scaling.md)",
                tenant,
            )
            async with self._lock:  # one creation at a time in this process
                await create_tenant_index(self._session, "tenant/fulltext_index", index, label, {})
        await self._session.run("admin/await_index", {"name": index, "timeoutSeconds": 60})
        self._ready.add(tenant)
        return index, label

    async def provision(self, tenants: Iterable[str]) -> list[str]:
        """``provision`` for these tenants; they are ready here afterwards."""
        tenants = sorted(set(tenants))
        created = await provision(self._session, tenants)
        self._ready.update(tenants)
        return created

    def forget(self, tenant: str) -> None:
        """Ask Neo4j again next time (the index may have been dropped)."""
        self._ready.discard(tenant)

    async def migrate(self) -> int:
        """Once per database: index the memories of every tenant written before indexes
        were per tenant. Memories written since carry their label from the start."""
        marker = {"name": MIGRATION}
        (row,) = await self._session.run("admin/migration_done", marker)
        if row["done"]:
            return 0
        done = 0
        for tenant in await self._session.run("admin/tenants", {}):
            done += await self.backfill(tenant["tenant"])
        await self._session.run("admin/migration_mark", marker)
        return done

    async def backfill(self, tenant: str, batch: int = 5000) -> int:
        """Label the tenant's memories written before per-tenant indexes existed."""
        _, label = await self.ensure(tenant)
        done = 0
        while True:
            (row,) = await self._session.run(
                "tenant/label_missing",
                {"tenant": tenant, "label": label, "batch": batch},
            )
            if not row["labelled"]:
                return done
            done += int(row["labelled"])
