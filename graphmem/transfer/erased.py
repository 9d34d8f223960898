"""What an import must not bring back: the subjects the target tenant's erasure receipts
name, with the moment of each one's last erasure (docs/cli.md#graphmem-import).

Tombstones expire (``GRAPHMEM_TOMBSTONE_DAYS``); receipts never do, so an import reads
the target's receipts once and drops a record of an erased user, session or memory
(or a task, by the id it is exported under)

- when the export was taken before that erasure (its header's moment is earlier): the
  erasure removed everything of the subject the export holds;
- or, for a file without that moment, when the record was created at or before the
  erasure (the tombstones' own rule).

A record created after the erasure is new, as the server's tombstones treat it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from graphmem.client import Graphmem

#: receipts one page asks for (the API's largest page)
PAGE = 100


def moment(text: Any) -> datetime | None:
    """An ISO 8601 time (UTC when it names no offset); None for anything else."""
    if not isinstance(text, str):
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


@dataclass
class Erasures:
    #: kind ('user', 'session', 'memory', 'task') → subject → the moment of its last erasure
    last: dict[str, dict[str, datetime]] = field(default_factory=dict)

    def add(self, receipt: dict[str, Any]) -> None:
        subject, at = receipt.get("subject"), moment(receipt.get("at"))
        if not isinstance(subject, dict) or at is None:
            return
        for kind, name in (
            ("user", "userId"),
            ("session", "sessionId"),
            ("task", "taskId"),
            ("task", "importId"),
        ):
            if isinstance(subject.get(name), str):
                self._mark(kind, [subject[name]], at)
        ids = subject.get("itemIds")
        if isinstance(ids, list):
            self._mark("memory", [i for i in ids if isinstance(i, str)], at)

    def _mark(self, kind: str, subjects: Iterable[str], at: datetime) -> None:
        seen = self.last.setdefault(kind, {})
        for s in subjects:
            if s not in seen or seen[s] < at:
                seen[s] = at

    def erased(
        self,
        created: datetime | None,
        exported: datetime | None,
        user_id: str | None = None,
        session_id: str | None = None,
        item_id: str | None = None,
        task_id: str | None = None,
    ) -> bool:
        """Whether a record of these subjects, created then, in an export taken then,
        was erased after it was written."""
        for kind, s in (
            ("user", user_id),
            ("session", session_id),
            ("memory", item_id),
            ("task", task_id),
        ):
            at = self.last.get(kind, {}).get(s) if s is not None else None
            if at is None:
                continue
            if exported is not None and at > exported:
                return True
            if created is not None and at >= created:
                return True
        return False

    @classmethod
    def of_tenant(cls, gm: Graphmem) -> Erasures:
        """Every receipt of the API key's tenant, a page at a time."""
        found, after = cls(), None
        while True:
            page = gm.erasure_receipts(after=after, limit=PAGE)
            for receipt in page.items:
                found.add(receipt.as_json())
            if page.next is None:
                return found
            after = page.next
