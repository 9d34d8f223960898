"""In-memory erasure (``GraphErasure``), as ``graphmem/stores/neo4j/erasure.py`` keeps
it: tombstones the fake graph's writes check (as memory/upsert_hot and upsert_batch do),
a subject's counts, a session's removal, and an append-only receipt log."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from graphmem.stores.erasure_models import StoredReceipt, SubjectCounts
from graphmem.stores.models import Located

if TYPE_CHECKING:
    from tests.support.fakes.graph import FakeGraphStore


class FakeGraphErasure:
    def __init__(self, store: FakeGraphStore) -> None:
        self.store = store
        #: (tenant, kind, subject) → (at, expires at)
        self.marks: dict[tuple[str, str, str], tuple[datetime, datetime]] = {}
        #: tenant → receipts in the order stored (never changed)
        self.log: dict[str, list[dict[str, Any]]] = {}

    def refuses(self, tenant: str, row: dict[str, Any]) -> bool:
        """Whether a tombstone keeps ``row`` out of the graph (the upserts' guard)."""
        created = row["createdAt"]
        for kind, subject in (("user", row.get("userId")), ("session", row["sessionId"])):
            mark = self.marks.get((tenant, kind, str(subject))) if subject else None
            if mark is not None and mark[0] >= created:
                return True
        return any((tenant, "memory", s) in self.marks for s in (row["id"], row.get("origin")) if s)

    async def tombstone(
        self, tenant: str, kind: str, subjects: Sequence[str], at: datetime, expires_at: datetime
    ) -> int:
        self.store.tenant_nodes.setdefault(tenant, {"id": tenant})  # as erasure/tombstone
        for subject in subjects:
            old = self.marks.get((tenant, kind, subject))
            if old is not None:
                at, expires_at = max(old[0], at), max(old[1], expires_at)
            self.marks[(tenant, kind, subject)] = (at, expires_at)
        return len(subjects)

    async def tombstones(
        self, tenant: str, kind: str, subjects: Sequence[str]
    ) -> dict[str, datetime]:
        return {
            s: self.marks[(tenant, kind, s)][0] for s in subjects if (tenant, kind, s) in self.marks
        }

    async def expired_tenants(self, now: datetime, limit: int = 1000) -> list[str]:
        return sorted({k[0] for k, (_, end) in self.marks.items() if end < now})[:limit]

    async def expire_tombstones(self, tenant: str, now: datetime, limit: int = 1000) -> int:
        gone = [k for k, (_, end) in self.marks.items() if k[0] == tenant and end < now][:limit]
        for k in gone:
            del self.marks[k]
        return len(gone)

    async def counts(
        self,
        tenant: str,
        user_id: str | None = None,
        session_id: str | None = None,
        ids: Sequence[str] = (),
    ) -> SubjectCounts:
        wanted = set(ids)
        nodes = [
            m
            for m in self.store.nodes(tenant)
            if (user_id is not None and m.get("userId") == user_id)
            or (session_id is not None and m.get("sessionId") == session_id)
            or m["id"] in wanted
        ]
        sessions = {str(m["sessionId"]) for m in nodes}
        if user_id is not None:
            sessions |= self.store.user_sessions(tenant, user_id)
        return SubjectCounts(
            memories=len(nodes),
            embedded=sum(1 for m in nodes if m.get("embedding") is not None),
            fulltext=len(nodes),
            held=len(nodes),
            edges=len(nodes),
            users=int(user_id is not None and bool(self.store.user_sessions(tenant, user_id))),
            session_nodes=int(
                session_id is not None and self.store.has_session(tenant, session_id)
            ),
            session_ids=sorted(sessions),
        )

    async def forget_session(
        self, tenant: str, session_id: str
    ) -> tuple[int, list[str], list[Located], int]:
        ids = [m["id"] for m in self.store.nodes(tenant) if m.get("sessionId") == session_id]
        done = await self.store.delete_many(tenant, ids)
        return done.removed, [], done.located, self.store.drop_session(tenant, session_id)

    async def user_items(self, tenant: str, user_id: str) -> int:
        return 0  # the fakes keep no LangGraph store items

    async def forget_user_items(self, tenant: str, user_id: str) -> int:
        return 0

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
        log = self.log.setdefault(tenant, [])
        if any(r["id"] == receipt_id for r in log):
            return False
        log.append({"id": receipt_id, "at": at, "userId": user_id, "document": document})
        return True

    async def receipts(
        self,
        tenant: str,
        user_id: str | None,
        before: tuple[datetime, str] | None,
        limit: int,
    ) -> list[StoredReceipt]:
        rows = sorted(self.log.get(tenant, []), key=lambda r: (r["at"], r["id"]), reverse=True)
        rows = [r for r in rows if user_id is None or r["userId"] == user_id]
        if before is not None:
            rows = [r for r in rows if (r["at"], r["id"]) < before]
        return [StoredReceipt(id=r["id"], document=r["document"], at=r["at"]) for r in rows][:limit]
