"""One fulltext index per tenant, so BM25's term statistics are the tenant's own.

Lucene keeps document frequencies and average field lengths per index. With one index
over every tenant, a tenant could learn which words another tenant's memories contain by
watching its own scores move. Each tenant's memories carry a label of their own
(``models.tenant_fulltext``), and an index over that label is created the first time the
tenant writes or searches. Creating it is idempotent (IF NOT EXISTS), so the set of
tenants known here only saves round trips; several processes may race to create it.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from neo4j.exceptions import ClientError

from graphmem.domain.models import tenant_fulltext
from graphmem.stores.neo4j.session import Neo4jSession

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
        async with self._lock:  # one creation at a time in this process
            await create_tenant_index(self._session, "tenant/fulltext_index", index, label, {})
        await self._session.run("admin/await_index", {"name": index, "timeoutSeconds": 60})
        self._ready.add(tenant)
        return index, label

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
