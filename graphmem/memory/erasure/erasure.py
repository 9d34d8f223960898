"""Erasure: forget memories, a session or a user in every place graphmem keeps data, leave
a tombstone that keeps every late writer from bringing them back, look again, and sign a
receipt of it all (``receipt.py``), kept in an append-only log.

The order is what makes it hold against writers in flight:

1. the tombstone, committed first: from then on the graph writes no memory of the subject
   created at or before the erasure (memory/upsert_hot, memory/upsert_batch check it in
   their own transaction), and the worker and spills drop such items from Redis;
2. the hot tier, session by session under each session's lock: a write-behind or a spill
   that read the hot tier before the tombstone holds that lock until its graph write has
   committed, so the graph pass below sees what it wrote;
3. the graph, in batches of 500 memories (``GraphStore.forget_user``,
   ``GraphErasure.forget_session``), then entities left without a mention;
4. the session's messages, and the scope versions every replica's search cache checks;
5. the verification: each place asked again for the subject.

An error before step 1 changed nothing. One after it leaves the tombstone, so nothing
comes back, and the same call again finishes the erasure and signs its receipt.

Tasks and records (``forget_task``, ``forget_records``, and the tasks ``forget_user``
takes) are ``kinds.py``'s, in the same order; every receipt is signed and logged by
``signed.py``, which keeps out of the log those of erasures that removed nothing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from graphmem.domain.models import EventKind, MemoryItem, utcnow
from graphmem.errors import BadInput, Forbidden
from graphmem.memory.entities.memory import EntityMemory
from graphmem.memory.erasure.kinds import KindForgets
from graphmem.memory.erasure.receipt import canonical, parse
from graphmem.memory.erasure.signed import Erased, Subject, signed
from graphmem.memory.inputs import Inputs
from graphmem.memory.tiers.sessions import Sessions
from graphmem.memory.writepath.changes import ScopeChanges
from graphmem.stores import (
    ChangeFeed,
    ConversationStore,
    GraphStore,
    HotTier,
    KindErasure,
    WorkingStore,
)
from graphmem.stores.erasure_models import SubjectCounts
from graphmem.stores.models import Located

#: memory ids one forget takes, at most (the receipt names each)
MAX_ITEMS = 500
#: receipts one page of the log holds, at most
MAX_PAGE = 100


class Erasure(KindForgets):
    def __init__(
        self,
        hot: HotTier,
        graph: GraphStore,
        sessions: Sessions,
        events: ChangeFeed,
        changes: ScopeChanges,
        key: bytes,
        tombstone_days: float = 30.0,
        entities: EntityMemory | None = None,
        conversation: ConversationStore | None = None,
        kinds: KindErasure | None = None,
        working: WorkingStore | None = None,
    ) -> None:
        self.hot = hot
        self.graph = graph
        self.sessions = sessions
        self.events = events
        self.changes = changes
        self.key = key
        self.tombstone_days = tombstone_days
        self.entities = entities
        self.conversation = conversation
        #: tasks and records (``kinds.py``), a task's working memory
        self.kinds = kinds
        self.working = working

    # --- the three forgets ------------------------------------------------------------
    async def forget(self, tenant: str, item_id: str) -> bool:
        """``forget_items`` of one id: whether the memory was there (in any tier)."""
        done = await self.forget_items(tenant, [item_id])
        return bool(done.counts["hotMemories"] or done.counts["graphMemories"])

    async def forget_items(self, tenant: str, item_ids: Sequence[str]) -> Erased:
        ids = Inputs.id_batch(item_ids, "itemIds", MAX_ITEMS)
        for item_id in ids:
            Inputs.item_id(item_id)
        subject = Subject("memories", item_ids=tuple(ids))
        by_session: dict[str, list[str]] = {}
        for item_id in ids:
            session_id = await self.hot.session_of(tenant, item_id)
            if session_id is not None:
                by_session.setdefault(session_id, []).append(item_id)
        held = {i for some in by_session.values() for i in some}
        for found in await self.graph.get(tenant, ids):
            if found.id not in held:
                by_session.setdefault(found.session_id, []).append(found.id)
                held.add(found.id)
        # Tombstones for the ids found only: a spill writes the graph before it leaves
        # the hot tier, so an id in neither (hot looked at first) has no write in flight,
        # and ids a tenant makes up leave nothing behind but the receipt.
        at = await self._tombstone(tenant, "memory", sorted(held)) if held else utcnow()
        before = await self.graph.erasure.counts(tenant, ids=ids)
        hot_removed, graph_removed, keys, located = 0, 0, set[str](), list[Located]()
        for session_id, some in by_session.items():
            async with self.sessions.lock(tenant, session_id):
                hot_removed += len(await self.hot.remove(tenant, session_id, some))
                done = await self.graph.delete_many(tenant, some)
            graph_removed += done.removed
            keys.update(done.keys)
            located += done.located
        entities = await self._settle(tenant, located, sorted(keys))
        for session_id, some in by_session.items():
            await self.events.publish(
                tenant, EventKind.FORGOTTEN, sessionId=session_id, itemIds=some
            )
        counts = {"hotMemories": hot_removed, "graphMemories": graph_removed, "entities": entities}
        left_hot = 0
        for session_id, some in by_session.items():
            left_hot += len(await self.hot.get(tenant, session_id, some))
        after = await self.graph.erasure.counts(tenant, ids=ids)
        return await self._receipt(
            tenant, subject, at, counts, before, after, left_hot, messages=(0, 0)
        )

    async def forget_session(self, tenant: str, session_id: str) -> Erased:
        Inputs.scope(session_id, None)
        subject = Subject("session", session_id=session_id)
        at = await self._tombstone(tenant, "session", [session_id])
        before = await self.graph.erasure.counts(tenant, session_id=session_id)
        async with self.sessions.lock(tenant, session_id):
            held = [i.id for i in await self.hot.items(tenant, session_id)]
            hot_removed = len(await self.hot.remove(tenant, session_id, held))
            removed, keys, located, nodes = await self.graph.erasure.forget_session(
                tenant, session_id
            )
        entities = await self._settle(tenant, located, keys)
        messages = await self._clear_messages(tenant, [session_id])
        await self.events.publish(tenant, EventKind.FORGOTTEN, sessionId=session_id, itemIds=held)
        counts = {
            "hotMemories": hot_removed,
            "graphMemories": removed,
            "sessions": nodes,
            "messages": messages[0],
            "entities": entities,
        }
        left_hot = len(await self.hot.items(tenant, session_id))
        after = await self.graph.erasure.counts(tenant, session_id=session_id)
        return await self._receipt(tenant, subject, at, counts, before, after, left_hot, messages)

    async def forget_user(self, tenant: str, user_id: str) -> Erased:
        Inputs.scope(None, user_id)
        subject = Subject("user", user_id=user_id)
        at = await self._tombstone(tenant, "user", [user_id])
        before = await self.graph.erasure.counts(tenant, user_id=user_id)
        hot_removed, theirs = 0, set(before.session_ids)
        for session_id in await self.hot.index.sessions(tenant):
            async with self.sessions.lock(tenant, session_id):
                ids = [i.id for i in await self._user_items(tenant, session_id, user_id)]
                if ids:
                    theirs.add(session_id)
                hot_removed += len(await self.hot.remove(tenant, session_id, ids))
        result = await self.graph.forget_user(tenant, user_id)
        entities = await self._settle(tenant, result.located, result.keys)
        items = await self.graph.erasure.forget_user_items(tenant, user_id)
        tasks, tasks_removed, tasks_found = await self._forget_user_tasks(tenant, user_id)
        messages = await self._clear_messages(tenant, sorted(theirs))
        counts = {
            "hotMemories": hot_removed,
            "graphMemories": result.removed,
            "sessions": result.sessions,
            "messages": messages[0],
            "entities": entities,
            "storeItems": items,
            "tasks": tasks.get("tasks", 0),
        }
        left_hot = 0
        for session_id in await self.hot.index.sessions(tenant):
            left_hot += len(await self._user_items(tenant, session_id, user_id))
        after = await self.graph.erasure.counts(tenant, user_id=user_id)
        left = {
            "neo4j.StoreItem": await self.graph.erasure.user_items(tenant, user_id),
            **{f"tasks.{k}": v for k, v in tasks_found.items()},
        }
        return await self._receipt(
            tenant, subject, at, counts, before, after, left_hot, messages, left, tasks_removed
        )

    # --- the log ------------------------------------------------------------------------
    async def receipts(
        self, tenant: str, user_id: str | None = None, after: str | None = None, limit: int = 20
    ) -> tuple[list[dict[str, Any]], str | None]:
        """A page of the tenant's receipts, newest first; the cursor of the next page."""
        if user_id is not None:
            Inputs.scope(None, user_id)
        if not 1 <= limit <= MAX_PAGE:
            raise BadInput(f"limit: between 1 and {MAX_PAGE}", field="limit")
        before = _cursor(after) if after else None
        rows = await self.graph.erasure.receipts(tenant, user_id, before, limit + 1)
        page = [json.loads(r.document) for r in rows[:limit]]
        more = len(rows) > limit
        last = rows[limit - 1] if more else None
        return page, (f"{last.at.isoformat()}|{last.id}" if last is not None else None)

    async def restore_receipt(self, tenant: str, document: Any) -> bool:
        """Put an exported receipt back in the log as it was signed (``graphmem import``):
        the signature is not checked here, the receipt's own tenant must be this one.
        False when the log holds it already."""
        text = document if isinstance(document, str) else json.dumps(document)
        try:
            receipt = parse(text.encode("utf-8"))
        except ValueError as exc:
            raise BadInput(f"receipt: {exc}", field="receipt") from None
        if not isinstance(receipt, dict) or not isinstance(receipt.get("subject"), dict):
            raise BadInput("receipt: not an erasure receipt", field="receipt")
        if receipt.get("tenant") != tenant:
            raise Forbidden("receipt: it is another tenant's")
        rid, at = receipt.get("id"), receipt.get("at")
        if not isinstance(rid, str) or not rid.startswith("rcpt_") or len(rid) > 64:
            raise BadInput("receipt: its id is not a receipt id", field="receipt")
        try:
            when = datetime.fromisoformat(str(at))
        except ValueError:
            raise BadInput("receipt: its time is not ISO 8601", field="receipt") from None
        subject = receipt["subject"]
        user = subject.get("userId")
        session = subject.get("sessionId")
        return await self.graph.erasure.add_receipt(
            tenant,
            rid,
            when,
            str(subject.get("kind")),
            user if isinstance(user, str) else None,
            session if isinstance(session, str) else None,
            canonical(receipt).decode("utf-8"),
            imported=True,
        )

    async def expire(self, tenant: str) -> int:
        """Tombstones past their lifetime removed (maintenance)."""
        return await self.graph.erasure.expire_tombstones(tenant, utcnow())

    # --- steps --------------------------------------------------------------------------
    async def _tombstone(self, tenant: str, kind: str, subjects: Sequence[str]) -> datetime:
        at = utcnow()
        expires = at + timedelta(days=self.tombstone_days)
        await self.graph.erasure.tombstone(tenant, kind, subjects, at, expires)
        return at

    async def _user_items(self, tenant: str, session_id: str, user_id: str) -> list[MemoryItem]:
        return [i for i in await self.hot.items(tenant, session_id) if i.user_id == user_id]

    async def _settle(self, tenant: str, located: Sequence[Located], keys: Sequence[str]) -> int:
        """Every replica's scope views told (versions move), orphaned entities removed."""
        await self.changes.written(tenant, list(located))
        if self.entities is None or not keys:
            return 0
        return await self.entities.store.refresh(tenant, list(keys))

    async def _clear_messages(self, tenant: str, sessions: Sequence[str]) -> tuple[int, int]:
        """The sessions' short-term messages: (removed, left after)."""
        if self.conversation is None:
            return 0, 0
        removed = left = 0
        for session_id in sessions:
            removed += await self.conversation.clear(tenant, session_id)
        for session_id in sessions:
            left += await self.conversation.count(tenant, session_id)
        return removed, left

    async def _receipt(
        self,
        tenant: str,
        subject: Subject,
        at: datetime,
        counts: dict[str, int],
        before: SubjectCounts,
        after: SubjectCounts,
        left_hot: int,
        messages: tuple[int, int],
        left: dict[str, int] | None = None,
        tasks: dict[str, Any] | None = None,
    ) -> Erased:
        removed = {
            "redis.hotItems": counts["hotMemories"],
            "redis.enrichmentCache": counts["hotMemories"],
            "redis.messages": messages[0],
            "neo4j.nodes": {
                "Memory": before.memories,
                "Session": counts.get("sessions", 0),
                "User": before.users,
                "Entity": counts["entities"],
                **({"StoreItem": counts["storeItems"]} if "storeItems" in counts else {}),
            },
            "neo4j.relationships": {
                "MENTIONS": before.mentions,
                "HAS_MEMORY": before.held,
                "MENTIONED": before.mentioned,
                "all": before.edges + before.mentioned,
            },
            "neo4j.vectorIndexEntries": before.embedded,
            "neo4j.fulltextIndexEntries": before.fulltext,
            "searchCaches.scopesInvalidated": 1
            + len(before.session_ids)
            + int(subject.user_id is not None),
            **({"tasks": tasks} if tasks else {}),
        }
        found = {
            "redis.hotItems": left_hot,
            "redis.messages": messages[1],
            "neo4j.Memory": after.memories,
            "neo4j.vectorIndexEntries": after.embedded,
            "neo4j.fulltextIndexEntries": after.fulltext,
            "neo4j.relationships": after.edges + after.mentioned,
            "neo4j.User": after.users if subject.kind == "user" else 0,
            "neo4j.Session": after.session_nodes if subject.kind == "session" else 0,
            **(left or {}),
        }
        return await signed(
            self.graph.erasure, self.key, tenant, subject, at, counts, removed, found
        )


def _cursor(after: str) -> tuple[datetime, str]:
    at, _, rid = after.partition("|")
    try:
        return datetime.fromisoformat(at), rid
    except ValueError:
        raise BadInput("after: not a cursor this query gave", field="after") from None
