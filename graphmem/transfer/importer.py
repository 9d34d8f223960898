"""Import a file's entries through the API in bounded batches, resumably.

The file is read an entry at a time (``sources.entries``) and added ``batch`` records at
a time, so memory stays bounded whatever the file's size. Before a batch is added, the
memories already carrying its import ids are looked up (``memories(metadataField,
metadataValues)``), so a run killed at any point and started again adds each record
once; a record whose import id came earlier in the file is a duplicate too. An entry the
file cannot give (not JSON, a field missing) or the API refuses (BAD_INPUT: a session id
it does not take, a date it cannot hold ...) is skipped and reported with where it is
and why, and the import goes on. Tiers are restored after adding: a record exported as
WARM or COLD is spilled there (``spill(itemIds, tier)``), and a rerun finishes spills an
interrupted run left undone. Exported tasks are imported as they come, one
``importTask`` each, which skips a task an earlier run wrote (by its import id).

Nothing erased comes back: exported erasure receipts are put back in the target's log
as they were signed (``restoreErasureReceipt``, never signed again), and a record or task
of a subject the target's receipts name is dropped when it was erased after the export
was taken or after it was created (``erased.py``), however long ago the erasure was.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from tqdm import tqdm

from graphmem.client import At, BadInput, Forbidden, Graphmem, MemoryItem, NotFound
from graphmem.transfer.erased import Erasures, moment
from graphmem.transfer.graphs import GraphCounts, GraphImport
from graphmem.transfer.sources import (
    IMPORT_ID,
    Entry,
    GraphEntry,
    Header,
    ItemEntry,
    ReceiptEntry,
    Record,
    Skipped,
    TaskEntry,
    entries,
)

#: how long the import follows a backlog that no worker is there to take
NO_WORKER_SECONDS = 10.0
#: skipped entries a report keeps (every one is counted, and passed to ``on_skip``)
KEPT_SKIPS = 100


@dataclass
class ImportReport:
    #: memories this run added
    added: int = 0
    #: records not added because their memory is stored already: by an earlier run, or
    #: earlier in the file (the same import id)
    duplicates: int = 0
    #: entries skipped (unreadable, or refused by the API), and the first of them
    skipped: int = 0
    skips: list[Skipped] = field(default_factory=list)
    spilled: int = 0
    tasks_added: int = 0
    tasks_skipped: int = 0
    #: the tenant's memories still waiting for their vectors when the import returned
    waiting: int = 0
    #: records and tasks not imported because their subject was erased since
    erased: int = 0
    receipts_restored: int = 0
    #: memories retracted again, as the export had them
    retracted: int = 0
    #: exported receipts the target's log held already
    receipts_held: int = 0
    #: store items and the knowledge graph (``graphs.py``)
    graph: GraphCounts = field(default_factory=GraphCounts)

    def skip(self, entry: Skipped) -> None:
        self.skipped += 1
        if len(self.skips) < KEPT_SKIPS:
            self.skips.append(entry)


#: memories one retract call takes (the API's bound)
RETRACT_BATCH = 500
#: reads that see retracted memories too
HISTORY = At(include_history=True)


def _fingerprint(import_id: str) -> int:
    """64 bits of an import id: the ids seen in a run are kept as these, a few tens of
    bytes each whatever the id's length."""
    return int.from_bytes(hashlib.blake2b(import_id.encode("utf-8"), digest_size=8).digest())


def _batches(items: Iterable[Entry], size: int) -> Iterable[list[Entry]]:
    batch: list[Entry] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def landed(gm: Graphmem, batch: Sequence[Record]) -> dict[str, MemoryItem]:
    """The memories of a batch's records already added, by import id."""
    sessions: dict[str, list[str]] = {}
    for record in batch:
        sessions.setdefault(record.session_id, []).append(record.import_id)
    found: dict[str, MemoryItem] = {}
    for session, ids in sessions.items():
        after: str | None = None
        while True:
            try:
                page = gm.memories(
                    session_id=session,
                    metadata_field=IMPORT_ID,
                    metadata_values=ids,
                    after=after,
                    at=HISTORY,  # a retracted memory is there too: never added twice
                )
            except BadInput:
                break  # a session id the API refuses holds nothing; the add says why
            found |= {str(m.metadata[IMPORT_ID]): m for m in page.items}
            if page.next is None:
                break
            after = page.next
    return found


class _Run:
    """One import: the report, the import ids seen so far, the progress bar."""

    def __init__(
        self, gm: Graphmem, bar: tqdm, on_skip: Callable[[Skipped], None] | None, batch: int
    ) -> None:
        self.gm = gm
        self.bar = bar
        self.on_skip = on_skip
        self.report = ImportReport()
        self.seen: set[int] = set()
        #: the moment the export was taken (its header), when the file has one
        self.exported: datetime | None = None
        self._erasures: Erasures | None = None
        self.graph = GraphImport(gm, batch, self.skip, self._item_erased)
        self.report.graph = self.graph.counts

    def erasures(self) -> Erasures:
        """The target's erasures, read once, at the first record or task."""
        if self._erasures is None:
            self._erasures = Erasures.of_tenant(self.gm)
        return self._erasures

    def header(self, entry: Header) -> None:
        self.exported = moment(entry.at)

    def receipt(self, entry: ReceiptEntry) -> None:
        try:
            restored = self.gm.restore_erasure_receipt(entry.receipt)
        except (BadInput, Forbidden) as exc:
            self.skip(Skipped(entry.where, f"receipt: {exc.message}"))
            return
        if restored:
            self.report.receipts_restored += 1
        else:
            self.report.receipts_held += 1
        if self._erasures is not None:
            self._erasures.add(entry.receipt)

    def _erased(self, record: Record) -> bool:
        return self.erasures().erased(
            moment(record.occurred_at),
            self.exported,
            user_id=record.user_id,
            session_id=record.session_id,
            item_id=record.origin_id,
        )

    def _item_erased(self, entry: ItemEntry) -> bool:
        """An item under ("users", id, ...) is the user's: forgetUser erases it, so an
        import drops it as it drops the user's memories (its updatedAt standing for a
        memory's occurredAt)."""
        ns = entry.namespace
        if len(ns) < 2 or ns[0] != "users":
            return False
        return self.erasures().erased(moment(entry.updated_at), self.exported, user_id=ns[1])

    def skip(self, entry: Skipped) -> None:
        self.report.skip(entry)
        if self.on_skip is not None:
            self.on_skip(entry)

    def memories(self, chunk: Sequence[Record]) -> None:
        fresh: list[Record] = []
        for record in chunk:
            if self._erased(record):
                self.report.erased += 1
                continue
            mark = _fingerprint(record.import_id)
            if mark in self.seen:
                self.report.duplicates += 1
            else:
                fresh.append(record)
                self.seen.add(mark)
        found = landed(self.gm, fresh) if fresh else {}
        new = [r for r in fresh if r.import_id not in found]
        self.report.duplicates += len(fresh) - len(new)
        added = self._add(new)
        found |= added
        self.report.added += len(added)
        for record in new:
            if record.import_id not in added:  # refused: a later line may carry it
                self.seen.discard(_fingerprint(record.import_id))
        self.report.spilled += _restore_tiers(self.gm, fresh, found)
        self._retract_again(fresh, found)
        self.bar.update(len(chunk))

    def _retract_again(self, chunk: Sequence[Record], found: dict[str, MemoryItem]) -> None:
        """Retract what the export had retracted and is held here (a rerun finds it
        retracted already); the retraction is of now, its reason the exported one."""
        by_reason: dict[str, list[tuple[Record, str]]] = {}
        for record in chunk:
            memory = found.get(record.import_id)
            if memory is not None and record.retracted_at and memory.retracted_at is None:
                by_reason.setdefault(record.retract_reason or "", []).append((record, memory.id))
        for reason, pairs in by_reason.items():
            for start in range(0, len(pairs), RETRACT_BATCH):
                batch = pairs[start : start + RETRACT_BATCH]
                try:
                    self.report.retracted += len(self.gm.retract([i for _, i in batch], reason))
                except BadInput as exc:
                    for record, _ in batch:
                        self.skip(Skipped(record.where, f"retractReason: {exc.message}"))

    def _add(self, records: Sequence[Record]) -> dict[str, MemoryItem]:
        """Add the records; those the API refuses are skipped with its reason. A refused
        batch is halved until the refused records are alone (the API adds a batch whole
        or not at all), a few requests for each bad record."""
        if not records:
            return {}
        try:
            added = self.gm.add_many([r.memory() for r in records])
        except BadInput as exc:
            if len(records) == 1:
                self.skip(Skipped(records[0].where, exc.message))
                return {}
            half = len(records) // 2
            return self._add(records[:half]) | self._add(records[half:])
        return {r.import_id: m for r, m in zip(records, added, strict=True)}

    def task(self, entry: TaskEntry) -> None:
        owner, origin = entry.task.get("owner"), entry.task.get("importId")
        if self.erasures().erased(
            moment(entry.task.get("createdAt")),
            self.exported,
            user_id=owner if isinstance(owner, str) else None,
            task_id=origin if isinstance(origin, str) else None,
        ):
            self.report.erased += 1
            return
        try:
            created = self.gm.import_task(entry.task).created
        except BadInput as exc:
            self.skip(Skipped(entry.where, f"task: {exc.message}"))
            return
        if created:
            self.report.tasks_added += 1
        else:
            self.report.tasks_skipped += 1


def import_file(
    gm: Graphmem,
    path: Path,
    *,
    batch: int = 200,
    progress: bool = True,
    wait_seconds: float = 0.0,
    on_skip: Callable[[Skipped], None] | None = None,
) -> ImportReport:
    """Add the file's records (``on_skip`` hears of each entry skipped, as it is); then,
    for up to ``wait_seconds``, follow the enrichment workers until every memory of the
    tenant is searchable by meaning too. Errors other than BAD_INPUT (the API down, the
    quota reached) end the import: a rerun resumes it."""
    if batch < 1:
        raise ValueError("batch must be at least 1")
    with tqdm(unit="memory", desc="added", disable=not progress) as bar:
        run = _Run(gm, bar, on_skip, batch)
        for chunk in _batches(entries(path), batch):
            for entry in chunk:  # an export's header and receipts come before its records
                if isinstance(entry, Header):
                    run.header(entry)
                elif isinstance(entry, ReceiptEntry):
                    run.receipt(entry)
            records = [e for e in chunk if isinstance(e, Record)]
            if records:
                run.memories(records)
            for entry in chunk:
                if isinstance(entry, Skipped):
                    run.skip(entry)
                elif isinstance(entry, TaskEntry):
                    run.task(entry)
                elif isinstance(entry, ItemEntry | GraphEntry):
                    run.graph.add(entry)
            run.graph.flush()
    report = run.report
    report.erased += run.graph.dropped
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
        memory = found.get(record.import_id)  # None: refused
        if memory is not None and record.tier != "HOT" and memory.tier == "HOT":
            spills.setdefault((record.session_id, record.tier), []).append(memory.id)
    done = 0
    for (session, tier), ids in spills.items():
        try:
            gm.spill(session, item_ids=ids, tier=tier)
        except NotFound as exc:
            # An automatic spill moved some meanwhile (into the tier their access count
            # decides); the rest still go where the export had them.
            gone = set(exc.extensions.get("itemIds") or ids)
            ids = [i for i in ids if i not in gone]
            if ids:
                gm.spill(session, item_ids=ids, tier=tier)
        done += len(ids)
    return done
