"""What an import drops by the target's receipts: a forgotten task by the id it is
exported under (its taskId, or the importId it had), and nothing of other tasks."""

from __future__ import annotations

from datetime import UTC, datetime

from graphmem.transfer.erased import Erasures


def test_a_task_receipt_drops_the_task_by_either_id_and_no_other() -> None:
    erasures = Erasures()
    erasures.add(
        {
            "subject": {"kind": "task", "taskId": "task_new", "importId": "task_old"},
            "at": "2026-11-28T10:00:00+00:00",
        }
    )
    exported = datetime(2026, 11, 1, tzinfo=UTC)
    assert erasures.erased(None, exported, task_id="task_new")
    assert erasures.erased(None, exported, task_id="task_old")
    assert not erasures.erased(None, exported, task_id="task_other")
    # An export taken after the erasure holds the task only if it was made again since.
    later = datetime(2026, 12, 1, tzinfo=UTC)
    assert not erasures.erased(later, later, task_id="task_new")
