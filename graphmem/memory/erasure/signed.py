"""What every forget answers: its subject, its counts and the signed receipt, and the
receipt appended to the tenant's log (docs/concepts.md#erasure).

The log keeps the receipts of erasures that removed something. One that found nothing
of its subject (made-up ids, a user never seen) is signed and answered all the same,
but not logged: else a tenant could grow the log without bound by forgetting names
(a quota would be no answer: an erasure must never be refused for space).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from graphmem.domain.models import utcnow
from graphmem.memory.erasure.receipt import VERSION, canonical, sign
from graphmem.stores import GraphErasure


@dataclass(frozen=True)
class Erased:
    """What a forget removed (the counts it always answered) and its signed receipt."""

    counts: dict[str, int]
    receipt: dict[str, Any]

    @property
    def document(self) -> str:
        return canonical(self.receipt).decode("utf-8")

    @property
    def logged(self) -> bool:
        """Whether the receipt is in the tenant's log (it removed something)."""
        return held(self.receipt["removed"])


@dataclass(frozen=True)
class Subject:
    kind: str  # 'memories', 'session', 'user', 'task' or 'records'
    user_id: str | None = None
    session_id: str | None = None
    item_ids: tuple[str, ...] = ()
    task_id: str | None = None
    #: the id a forgotten task was imported under (an import of its export is refused)
    import_id: str | None = None
    record_ids: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind}
        if self.user_id is not None:
            out["userId"] = self.user_id
        if self.session_id is not None:
            out["sessionId"] = self.session_id
        if self.item_ids:
            out["itemIds"] = list(self.item_ids)
        if self.task_id is not None:
            out["taskId"] = self.task_id
        if self.import_id is not None:
            out["importId"] = self.import_id
        if self.record_ids:
            out["recordIds"] = list(self.record_ids)
        return out


def held(removed: Any) -> bool:
    """Whether any count of a receipt's ``removed`` (nested per place) is above 0; the
    search caches told are no place of the subject's."""
    if isinstance(removed, dict):
        return any(held(v) for k, v in removed.items() if not k.startswith("searchCaches."))
    return isinstance(removed, int) and removed > 0


async def signed(
    log: GraphErasure,
    key: bytes,
    tenant: str,
    subject: Subject,
    at: datetime,
    counts: dict[str, int],
    removed: dict[str, Any],
    found: dict[str, int],
) -> Erased:
    """The receipt of ``removed`` and of what the second look ``found``, signed, and
    appended to the log when it removed anything."""
    receipt_id = f"rcpt_{uuid.uuid4().hex}"
    body = {
        "version": VERSION,
        "id": receipt_id,
        "tenant": tenant,
        "subject": subject.as_json(),
        "at": at.isoformat(),
        "completedAt": utcnow().isoformat(),
        "removed": removed,
        "verification": {"found": found, "clean": not any(found.values())},
    }
    erased = Erased(counts, sign(body, key))
    if erased.logged:
        await log.add_receipt(
            tenant,
            receipt_id,
            at,
            subject.kind,
            subject.user_id,
            subject.session_id,
            erased.document,
        )
    return erased
