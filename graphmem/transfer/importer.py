"""Import records through the API in batches, resumably.

Before a batch is added, the memories already carrying its import ids are looked up
(``memories(metadataField, metadataValues)``), so a run killed at any point and started
again adds each record once. Tiers are restored after adding: a record exported as WARM
or COLD is spilled there (``spill(itemIds, tier)``), and a rerun finishes spills an
interrupted run left undone. Exported tasks go last, one ``importTask`` each, which skips
a task an earlier run wrote (by its import id).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from ..client import Graphmem, MemoryItem
from .sources import IMPORT_ID, Record, records, tasks

#: how long the import follows a backlog that no worker is there to take
NO_WORKER_SECONDS = 10.0


@dataclass
class ImportReport:
    added: int = 0
    skipped: int = 0
    spilled: int = 0
    tasks_added: int = 0
    tasks_skipped: int = 0
    #: the tenant's memories still waiting for their vectors when the import returned
    waiting: int = 0


def _chunks(items: Sequence[Record], size: int) -> Iterable[Sequence[Record]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def landed(gm: Graphmem, batch: Sequence[Record]) -> dict[str, MemoryItem]:
    """The memories of a batch's records already added, by import id."""
    sessions: dict[str, list[str]] = {}
    for record in batch:
        sessions.setdefault(record.session_id, []).append(record.import_id)
    found: dict[str, MemoryItem] = {}
    for session, ids in sessions.items():
        after: str | None = None
        while True:
            page = gm.memories(
                session_id=session, metadata_field=IMPORT_ID, metadata_values=ids, after=after
            )
            found |= {str(m.metadata[IMPORT_ID]): m for m in page.items}
            if page.next is None:
                break
            after = page.next
    return found


def import_file(
    gm: Graphmem,
    path: Path,
    *,
    batch: int = 200,
    progress: bool = True,
    wait_seconds: float = 0.0,
) -> ImportReport:
    """Add the file's records; then, for up to ``wait_seconds``, follow the enrichment
    workers until every memory of the tenant is searchable by meaning too."""
    todo = list(records(path))
    report = ImportReport()
    with tqdm(total=len(todo), unit="memory", desc="added", disable=not progress) as bar:
        for chunk in _chunks(todo, batch):
            found = landed(gm, chunk)
            new = [r for r in chunk if r.import_id not in found]
            if new:
                added = gm.add_many([r.memory() for r in new])
                found |= {r.import_id: m for r, m in zip(new, added, strict=True)}
            report.added += len(new)
            report.skipped += len(chunk) - len(new)
            report.spilled += _restore_tiers(gm, chunk, found)
            bar.update(len(chunk))
    for task in tasks(path):
        if gm.import_task(task).created:
            report.tasks_added += 1
        else:
            report.tasks_skipped += 1
    if wait_seconds > 0:
        report.waiting = enriched(gm, wait_seconds, progress)
    return report


def enriched(
    gm: Graphmem,
    seconds: float,
    progress: bool = True,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Follow the tenant's enrichment backlog down to 0, for at most ``seconds``; what
    is still waiting then (0 when done, or when write-behind is off)."""
    status = gm.enrichment()
    if not status.enabled:
        return 0
    deadline = clock() + seconds
    first = status.waiting
    with tqdm(total=first, unit="memory", desc="enriched", disable=not progress) as bar:
        idle_since = None
        while status.waiting > 0 and clock() < deadline:
            if status.workers == 0:
                idle_since = idle_since or clock()
                if clock() - idle_since > NO_WORKER_SECONDS:
                    break  # nobody enriches; the memories stay findable by their words
                bar.set_postfix_str("no enrichment worker is running")
            else:
                idle_since = None
            sleep(0.5)
            status = gm.enrichment()
            bar.n = max(0, first - status.waiting)
            bar.refresh()
    return status.waiting


def _restore_tiers(gm: Graphmem, chunk: Sequence[Record], found: dict[str, MemoryItem]) -> int:
    spills: dict[tuple[str, str], list[str]] = {}
    for record in chunk:
        memory = found[record.import_id]
        if record.tier != "HOT" and memory.tier == "HOT":
            spills.setdefault((record.session_id, record.tier), []).append(memory.id)
    for (session, tier), ids in spills.items():
        gm.spill(session, item_ids=ids, tier=tier)
    return sum(len(ids) for ids in spills.values())
