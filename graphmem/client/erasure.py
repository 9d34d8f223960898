"""Erasure through the API (docs/concepts.md#erasure): ``forget_user``,
``forget_session``, ``forget_memories``, ``forget_task``, ``forget_records``, the
tenant's receipts and restoring an exported
one, with the signed receipt each answers, for both clients.

A receipt's ``document`` is the text the server signed (canonical JSON): ``save`` writes
it unchanged, and ``graphmem receipt verify FILE`` accepts that file, or any JSON text of
the same object (``as_json()`` dumped with other spacing); one changed value does not
verify."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from graphmem.client.operations import Op, _some

T = TypeVar("T")


@dataclass(frozen=True)
class ErasureReceipt:
    id: str
    #: the moment of the erasure (its tombstone), ISO 8601
    at: str
    subject: dict[str, Any]
    removed: dict[str, Any]
    verification: dict[str, Any]
    #: the verification found nothing of the subject
    clean: bool
    signature: str
    #: the whole signed receipt as canonical JSON: the text to keep and verify
    document: str

    FIELDS = "id at subject removed verification clean signature document"

    @classmethod
    def of(cls, d: dict[str, Any]) -> ErasureReceipt:
        return cls(
            id=d["id"],
            at=d["at"],
            subject=d["subject"],
            removed=d["removed"],
            verification=d["verification"],
            clean=bool(d["clean"]),
            signature=d["signature"],
            document=d["document"],
        )

    def as_json(self) -> dict[str, Any]:
        """The signed receipt as a JSON object (signature included)."""
        parsed: dict[str, Any] = json.loads(self.document)
        return parsed

    def save(self, path: str | Path) -> Path:
        """Write ``document`` as it was signed, for ``graphmem receipt verify``."""
        out = Path(path)
        out.write_bytes(self.document.encode("utf-8"))
        return out


@dataclass(frozen=True)
class Forgotten:
    """What a forget removed, and its receipt (``sessions`` and ``messages`` are 0 for
    ``forget_memories``, which touches neither)."""

    hot_memories: int
    graph_memories: int
    entities: int
    receipt: ErasureReceipt
    sessions: int = 0
    messages: int = 0
    #: tasks the user held, removed (``forget_user`` only)
    tasks: int = 0

    @classmethod
    def of(cls, d: dict[str, Any]) -> Forgotten:
        return cls(
            hot_memories=d["hotMemories"],
            graph_memories=d["graphMemories"],
            entities=d["entities"],
            receipt=ErasureReceipt.of(d["receipt"]),
            sessions=d.get("sessions") or 0,
            messages=d.get("messages") or 0,
            tasks=d.get("tasks") or 0,
        )


@dataclass(frozen=True)
class TaskForgotten:
    """What ``forget_task`` removed, and its receipt."""

    tasks: int
    steps: int
    transfers: int
    episodes: int
    reflections: int
    working_memory: int
    receipt: ErasureReceipt

    @classmethod
    def of(cls, d: dict[str, Any]) -> TaskForgotten:
        return cls(
            tasks=d["tasks"],
            steps=d["steps"],
            transfers=d["transfers"],
            episodes=d["episodes"],
            reflections=d["reflections"],
            working_memory=d["workingMemory"],
            receipt=ErasureReceipt.of(d["receipt"]),
        )


@dataclass(frozen=True)
class RecordsForgotten:
    """What ``forget_records`` removed, and its receipt."""

    records: int
    receipt: ErasureReceipt

    @classmethod
    def of(cls, d: dict[str, Any]) -> RecordsForgotten:
        return cls(records=d["records"], receipt=ErasureReceipt.of(d["receipt"]))


@dataclass(frozen=True)
class ReceiptPage:
    #: newest first
    items: list[ErasureReceipt]
    #: ``after`` for the next page; None after the last
    next: str | None

    @classmethod
    def of(cls, d: dict[str, Any]) -> ReceiptPage:
        return cls([ErasureReceipt.of(r) for r in d["items"]], d.get("next"))


_RECEIPT = f"receipt {{ {ErasureReceipt.FIELDS} }}"


def forget_memories(item_ids: Sequence[str]) -> Op[Forgotten]:
    return Op(
        "mutation($i: [ID!]!) { forgetMemories(itemIds: $i) "
        f"{{ hotMemories graphMemories entities {_RECEIPT} }} }}",
        {"i": list(item_ids)},
        lambda d: Forgotten.of(d["forgetMemories"]),
    )


def forget_session(session_id: str) -> Op[Forgotten]:
    return Op(
        "mutation($s: ID!) { forgetSession(sessionId: $s) "
        f"{{ hotMemories graphMemories sessions messages entities {_RECEIPT} }} }}",
        {"s": session_id},
        lambda d: Forgotten.of(d["forgetSession"]),
    )


def forget_user(user_id: str) -> Op[Forgotten]:
    return Op(
        "mutation($u: ID!) { forgetUser(userId: $u) "
        f"{{ hotMemories graphMemories sessions messages entities tasks {_RECEIPT} }} }}",
        {"u": user_id},
        lambda d: Forgotten.of(d["forgetUser"]),
    )


def forget_task(task_id: str, owner: str | None, generation: int | None) -> Op[TaskForgotten]:
    return Op(
        "mutation($t: ID!, $o: String, $g: Int) { forgetTask(taskId: $t, owner: $o, "
        "generation: $g) { tasks steps transfers episodes reflections workingMemory "
        f"{_RECEIPT} }} }}",
        _some(t=task_id, o=owner, g=generation),
        lambda d: TaskForgotten.of(d["forgetTask"]),
    )


def forget_records(ids: Sequence[str]) -> Op[RecordsForgotten]:
    return Op(
        f"mutation($i: [ID!]!) {{ forgetRecords(ids: $i) {{ records {_RECEIPT} }} }}",
        {"i": list(ids)},
        lambda d: RecordsForgotten.of(d["forgetRecords"]),
    )


def erasure_receipts(user_id: str | None, after: str | None, limit: int) -> Op[ReceiptPage]:
    return Op(
        "query($u: ID, $a: String, $l: Int!) { erasureReceipts(userId: $u, after: $a, "
        f"limit: $l) {{ items {{ {ErasureReceipt.FIELDS} }} next }} }}",
        _some(u=user_id, a=after, l=limit),
        lambda d: ReceiptPage.of(d["erasureReceipts"]),
    )


def restore_erasure_receipt(receipt: ErasureReceipt | dict[str, Any] | str) -> Op[bool]:
    if isinstance(receipt, ErasureReceipt):
        receipt = receipt.document
    return Op(
        "mutation($r: JSON!) { restoreErasureReceipt(receipt: $r) }",
        {"r": receipt},
        lambda d: bool(d["restoreErasureReceipt"]),
    )


class ErasureCalls:
    """The blocking client's erasure methods (``Graphmem`` has them)."""

    def _run(self, op: Op[T]) -> T:
        raise NotImplementedError

    def forget_user(self, user_id: str) -> Forgotten:
        """Erase a user everywhere graphmem keeps their data; the signed receipt."""
        return self._run(forget_user(user_id))

    def forget_session(self, session_id: str) -> Forgotten:
        return self._run(forget_session(session_id))

    def forget_memories(self, item_ids: Sequence[str]) -> Forgotten:
        """At most 500 ids a call."""
        return self._run(forget_memories(item_ids))

    def forget_task(
        self, task_id: str, *, owner: str | None = None, generation: int | None = None
    ) -> TaskForgotten:
        """Erase a task with its steps, hand-overs, episodes and working memory; an owned
        task needs its current handle (owner, generation)."""
        return self._run(forget_task(task_id, owner, generation))

    def forget_records(self, ids: Sequence[str]) -> RecordsForgotten:
        """Erase structured records by id, at most 500 a call."""
        return self._run(forget_records(ids))

    def erasure_receipts(
        self, *, user_id: str | None = None, after: str | None = None, limit: int = 20
    ) -> ReceiptPage:
        return self._run(erasure_receipts(user_id, after, limit))

    def restore_erasure_receipt(self, receipt: ErasureReceipt | dict[str, Any] | str) -> bool:
        """Put an exported receipt back in the tenant's log as signed; False when held."""
        return self._run(restore_erasure_receipt(receipt))


class AsyncErasureCalls:
    """The asyncio client's erasure methods (``AsyncGraphmem`` has them)."""

    async def _run(self, op: Op[T]) -> T:
        raise NotImplementedError

    async def forget_user(self, user_id: str) -> Forgotten:
        """Erase a user everywhere graphmem keeps their data; the signed receipt."""
        return await self._run(forget_user(user_id))

    async def forget_session(self, session_id: str) -> Forgotten:
        return await self._run(forget_session(session_id))

    async def forget_memories(self, item_ids: Sequence[str]) -> Forgotten:
        """At most 500 ids a call."""
        return await self._run(forget_memories(item_ids))

    async def forget_task(
        self, task_id: str, *, owner: str | None = None, generation: int | None = None
    ) -> TaskForgotten:
        """Erase a task with its steps, hand-overs, episodes and working memory; an owned
        task needs its current handle (owner, generation)."""
        return await self._run(forget_task(task_id, owner, generation))

    async def forget_records(self, ids: Sequence[str]) -> RecordsForgotten:
        """Erase structured records by id, at most 500 a call."""
        return await self._run(forget_records(ids))

    async def erasure_receipts(
        self, *, user_id: str | None = None, after: str | None = None, limit: int = 20
    ) -> ReceiptPage:
        return await self._run(erasure_receipts(user_id, after, limit))

    async def restore_erasure_receipt(self, receipt: ErasureReceipt | dict[str, Any] | str) -> bool:
        """Put an exported receipt back in the tenant's log as signed; False when held."""
        return await self._run(restore_erasure_receipt(receipt))
