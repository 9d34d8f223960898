"""Erasure in the graph (``graphmem/memory/erasure/``): tombstones, what the graph holds
of a subject, a session's removal in bounded batches, and the append-only receipts."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from graphmem.domain.models import tenant_fulltext, to_datetime
from graphmem.stores.erasure_models import StoredReceipt, SubjectCounts
from graphmem.stores.models import Located
from graphmem.stores.neo4j.records import removed, row_ids
from graphmem.stores.neo4j.session import Neo4jSession

#: memories deleted per transaction: a huge session or user never holds locks long
BATCH = 500
#: sessions a subject's counts name, at most (each is a Redis list of messages to clear)
MAX_SESSIONS = 10_000


class Neo4jGraphErasure:
    def __init__(self, session: Neo4jSession) -> None:
        self.session = session

    async def tombstone(
        self, tenant: str, kind: str, subjects: Sequence[str], at: datetime, expires_at: datetime
    ) -> int:
        if not subjects:
            return 0
        (row,) = await self.session.run(
            "erasure/tombstone",
            {
                "tenant": tenant,
                "kind": kind,
                "subjects": list(subjects),
                "at": at,
                "expiresAt": expires_at,
            },
        )
        return int(row["tombstones"])

    async def tombstones(
        self, tenant: str, kind: str, subjects: Sequence[str]
    ) -> dict[str, datetime]:
        rows = await self.session.run(
            "erasure/tombstones", {"tenant": tenant, "kind": kind, "subjects": list(subjects)}
        )
        return {str(r["subject"]): to_datetime(r["at"]) for r in rows}

    async def expired_tenants(self, now: datetime, limit: int = 1000) -> list[str]:
        rows = await self.session.run("admin/tombstone_tenants", {"now": now, "limit": limit})
        return [str(r["tenant"]) for r in rows]

    async def expire_tombstones(self, tenant: str, now: datetime, limit: int = 1000) -> int:
        (row,) = await self.session.run(
            "erasure/tombstones_expire", {"tenant": tenant, "now": now, "limit": limit}
        )
        return int(row["expired"])

    async def counts(
        self,
        tenant: str,
        user_id: str | None = None,
        session_id: str | None = None,
        ids: Sequence[str] = (),
    ) -> SubjectCounts:
        (row,) = await self.session.run(
            "erasure/subject_counts",
            {
                "tenant": tenant,
                "userId": user_id,
                "sessionId": session_id,
                "ids": list(ids),
                "label": tenant_fulltext(tenant)[1],
                "maxSessions": MAX_SESSIONS,
            },
        )
        return SubjectCounts(
            memories=int(row["memories"]),
            embedded=int(row["embedded"]),
            fulltext=int(row["fulltext"]),
            mentions=int(row["mentions"]),
            held=int(row["held"]),
            edges=int(row["edges"]),
            users=int(row["users"]),
            mentioned=int(row["mentioned"]),
            session_nodes=int(row["sessionNodes"]),
            session_ids=sorted({str(s) for s in row["sessionIds"]}),
        )

    async def forget_session(
        self, tenant: str, session_id: str
    ) -> tuple[int, list[str], list[Located], int]:
        """Delete a session's memories in batches, then the session node: (memories
        removed, entity keys to refresh, where they lived, session nodes removed)."""
        count, keys, located = 0, set[str](), list[Located]()
        while True:
            ids = row_ids(
                await self.session.run(
                    "erasure/session_memory_ids",
                    {"tenant": tenant, "sessionId": session_id, "limit": BATCH},
                )
            )
            if not ids:
                break
            done = removed(
                await self.session.run("memory/delete_many", {"tenant": tenant, "ids": ids})
            )
            count += done.removed
            keys.update(done.keys)
            located += done.located
            if done.removed == 0:
                break  # nothing deletable (a concurrent delete): do not loop
        (rest,) = await self.session.run(
            "erasure/session_remove", {"tenant": tenant, "sessionId": session_id}
        )
        return count, sorted(keys), located, int(rest["sessions"])

    async def user_items(self, tenant: str, user_id: str) -> int:
        """The user's LangGraph store items (namespace ("users", userId, ...))."""
        (row,) = await self.session.run(
            "erasure/user_items_count", {"tenant": tenant, "userId": user_id}
        )
        return int(row["items"])

    async def forget_user_items(self, tenant: str, user_id: str) -> int:
        """Delete the user's store items, ``BATCH`` per transaction; how many."""
        count = 0
        while True:
            (row,) = await self.session.run(
                "erasure/user_items_remove", {"tenant": tenant, "userId": user_id, "limit": BATCH}
            )
            if not row["removed"]:
                return count
            count += int(row["removed"])

    async def add_receipt(
        self,
        tenant: str,
        receipt_id: str,
        at: datetime,
        kind: str,
        user_id: str | None,
        session_id: str | None,
        document: str,
        imported: bool = False,
    ) -> bool:
        """Append a receipt; False when the log holds one with that id already."""
        rows = await self.session.run(
            "erasure/receipt_add",
            {
                "tenant": tenant,
                "id": receipt_id,
                "at": at,
                "kind": kind,
                "userId": user_id,
                "sessionId": session_id,
                "document": document,
                "imported": imported,
            },
        )
        return bool(rows)

    async def receipts(
        self,
        tenant: str,
        user_id: str | None,
        before: tuple[datetime, str] | None,
        limit: int,
    ) -> list[StoredReceipt]:
        rows = await self.session.run(
            "erasure/receipts",
            {
                "tenant": tenant,
                "userId": user_id,
                "before": before[0] if before else None,
                "beforeId": before[1] if before else None,
                "limit": limit,
            },
        )
        return [
            StoredReceipt(id=str(r["id"]), document=str(r["document"]), at=to_datetime(r["at"]))
            for r in rows
        ]
