"""`graphmem import` over a stand-in for the client (pure logic): bad records are skipped
with their line and reason, duplicates are added once, batches stay bounded, and after
adding it follows the tenant's enrichment backlog (``enrichment()``).
tests/integration/test_import_cli.py runs the command against a real server."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from graphmem.client import (
    BadInput,
    Enrichment,
    ErasureReceipt,
    Forbidden,
    MemoryItem,
    MemoryPage,
    ReceiptPage,
)
from graphmem.transfer import importer
from graphmem.transfer.sources import IMPORT_ID, Skipped


class Backlog:
    def __init__(self, states: list[Enrichment]) -> None:
        self._states: Iterator[Enrichment] = iter(states)
        self.last = states[-1]
        self.asked = 0

    def enrichment(self) -> Enrichment:
        self.asked += 1
        self.last = next(self._states, self.last)
        return self.last


def no_sleep(_: float) -> None:
    pass


def ticking(step: int) -> Callable[[], float]:
    """A clock that moves ``step`` seconds each time it is read."""
    ticks = iter(range(0, 100_000, step))
    return lambda: float(next(ticks))


def test_it_follows_the_backlog_down_to_zero() -> None:
    states = [Enrichment(True, n, 0, 1) for n in (30, 20, 5, 0)]
    assert importer.enriched(Backlog(states), 60, False, sleep=no_sleep) == 0  # type: ignore[arg-type]


def test_it_stops_when_no_worker_takes_the_backlog() -> None:
    backlog = Backlog([Enrichment(True, 7, 0, 0)])
    left = importer.enriched(backlog, 600, False, ticking(2), no_sleep)  # type: ignore[arg-type]
    assert left == 7
    assert backlog.asked < 10  # gave up after about 10 s, not at the 600 s deadline


def test_it_returns_what_is_left_when_time_is_up() -> None:
    states = [Enrichment(True, 9, 0, 1)]  # a worker, but a slow one
    left = importer.enriched(Backlog(states), 30, False, ticking(5), no_sleep)  # type: ignore[arg-type]
    assert left == 9


def test_nothing_to_follow_without_write_behind() -> None:
    off = Backlog([Enrichment(False, 0, 0, 0)])
    assert importer.enriched(off, 60, False, sleep=no_sleep) == 0  # type: ignore[arg-type]


def line(**fields: Any) -> str:
    return json.dumps(fields)


def write(path: Path, *lines: str | bytes) -> Path:
    path.write_bytes(b"\n".join(x if isinstance(x, bytes) else x.encode() for x in lines) + b"\n")
    return path


class StandIn:
    """What import_file asks of the client: it keeps memories by import id and refuses
    (BAD_INPUT) a batch holding a memory whose content is "refuse me"."""

    def __init__(self) -> None:
        self.stored: dict[str, MemoryItem] = {}
        self.batches: list[int] = []
        #: the tenant's erasure receipts, as signed documents (their log)
        self.log: list[str] = []

    def erasure_receipts(self, *, after: str | None = None, limit: int = 20) -> ReceiptPage:
        start = int(after or 0)
        page = [receipt_of(json.loads(d)) for d in self.log[start : start + limit]]
        more = start + limit < len(self.log)
        return ReceiptPage(page, str(start + limit) if more else None)

    def restore_erasure_receipt(self, receipt: dict[str, Any]) -> bool:
        if receipt.get("tenant") != "t1":
            raise Forbidden("receipt: it is another tenant's", {"code": "FORBIDDEN"})
        document = json.dumps(receipt, sort_keys=True)
        if document in self.log:
            return False
        self.log.append(document)
        return True

    def memories(self, **kw: Any) -> MemoryPage:
        wanted = set(kw["metadata_values"])
        found = [m for key, m in self.stored.items() if key in wanted]
        return MemoryPage(found, None)

    def add_many(self, memories: Sequence[dict[str, Any]]) -> list[MemoryItem]:
        if any(m["content"] == "refuse me" for m in memories):
            raise BadInput("content: refused", {"code": "BAD_INPUT", "field": "content"})
        self.batches.append(len(memories))
        added = []
        for m in memories:
            n = len(self.stored)
            item = MemoryItem(
                f"mem_{n}",
                m["sessionId"],
                None,
                m["content"],
                "MESSAGE",
                "HOT",
                0,
                1,
                1.0,
                None,
                m["metadata"],
            )
            self.stored[m["metadata"][IMPORT_ID]] = item
            added.append(item)
        return added

    def spill(self, *args: Any, **kw: Any) -> None:
        raise AssertionError("nothing here is exported warm or cold")

    def import_task(self, task: dict[str, Any]) -> Any:
        raise AssertionError("no tasks here")


def test_bad_records_are_skipped_duplicates_added_once_batches_bounded(tmp_path: Path) -> None:
    lines = [line(id=f"m{n}", sessionId=f"s{n % 3}", content=f"memory {n}") for n in range(10)]
    lines[4] = line(id="m4", sessionId="s1", content="refuse me")
    lines.append(line(id="m2", sessionId="s2", content="memory 2 again"))  # same id, later batch
    lines.append(line(id="m7", sessionId="other", content="memory 7 elsewhere"))
    lines.append("not json")
    path = write(tmp_path / "dups.jsonl", *lines)
    gm = StandIn()
    heard: list[Skipped] = []
    report = importer.import_file(gm, path, batch=4, progress=False, on_skip=heard.append)  # type: ignore[arg-type]
    assert report.added == 9 and len(gm.stored) == 9
    assert report.duplicates == 2
    assert report.skipped == 2 and [s.where for s in heard] == ["line 5", "line 13"]
    assert heard[0].reason == "content: refused"
    assert max(gm.batches) <= 4
    again = importer.import_file(gm, path, batch=4, progress=False)  # type: ignore[arg-type]
    assert (again.added, again.duplicates, again.skipped) == (0, 11, 2)
    assert len(gm.stored) == 9


def receipt_of(doc: dict[str, Any]) -> ErasureReceipt:
    return ErasureReceipt(
        doc["id"], doc["at"], doc["subject"], {}, {}, True, "sig", json.dumps(doc, sort_keys=True)
    )


def erasure(rid: str, at: str, **subject: Any) -> dict[str, Any]:
    return {"id": rid, "tenant": "t1", "at": at, "subject": subject}


def test_what_the_targets_receipts_erased_after_the_export_or_the_record_stays_out(
    tmp_path: Path,
) -> None:
    gm = StandIn()
    # Receipts never expire: these erasures may be years old, their tombstones long gone.
    gm.log = [
        json.dumps(erasure("rcpt_1", "2026-03-01T00:00:00+00:00", kind="user", userId="ada")),
        json.dumps(erasure("rcpt_2", "2026-03-01T00:00:00+00:00", kind="session", sessionId="x")),
        json.dumps(erasure("rcpt_3", "2026-03-01T00:00:00+00:00", kind="memories", itemIds=["m9"])),
    ]
    old = "2026-02-01T00:00:00+00:00"
    new = "2026-04-01T00:00:00+00:00"
    memories = [
        line(id="m1", sessionId="s1", userId="ada", content="ada's", occurredAt=old),
        line(id="m2", sessionId="x", userId="bob", content="in x", occurredAt=old),
        line(id="m9", sessionId="s1", userId="bob", content="m9", occurredAt=old),
        line(id="m3", sessionId="s1", userId="bob", content="bob's", occurredAt=old),
        line(id="m4", sessionId="s1", userId="ada", content="ada later", occurredAt=new),
    ]
    header = line(kind="export", version=1, at="2026-02-15T00:00:00+00:00")
    before = importer.import_file(
        gm, write(tmp_path / "a.jsonl", header, *memories), progress=False
    )  # type: ignore[arg-type]
    # Taken before the erasures: everything of their subjects goes, even ada's "later"
    # memory (its occurredAt is the client's word; the export's moment is not).
    assert before.erased == 4 and before.added == 1
    assert {m.content for m in gm.stored.values()} == {"bob's"}
    # Without a header, a record is dropped when created at or before the erasure.
    gm.stored.clear()
    bare = importer.import_file(gm, write(tmp_path / "b.jsonl", *memories), progress=False)  # type: ignore[arg-type]
    assert bare.erased == 3
    assert {m.content for m in gm.stored.values()} == {"bob's", "ada later"}


def test_exported_receipts_are_restored_as_signed_and_count_as_erasures(tmp_path: Path) -> None:
    gm = StandIn()
    signed = erasure("rcpt_9", "2026-03-01T00:00:00+00:00", kind="user", userId="ada")
    signed["signature"] = {"algorithm": "HMAC-SHA256", "value": "ab" * 32}
    foreign = {**erasure("rcpt_8", "2026-03-01T00:00:00+00:00", kind="user"), "tenant": "t2"}
    lines = [
        line(kind="export", version=1, at="2026-03-02T00:00:00+00:00"),
        line(kind="receipt", receipt=signed),
        line(kind="receipt", receipt=foreign),
        line(id="m1", sessionId="s1", userId="ada", content="a", occurredAt="2026-02-01"),
        line(id="m2", sessionId="s1", userId="ada", content="b", occurredAt="2026-03-05"),
    ]
    path = write(tmp_path / "r.jsonl", *lines)
    report = importer.import_file(gm, path, progress=False)  # type: ignore[arg-type]
    assert (report.receipts_restored, report.receipts_held, report.skipped) == (1, 0, 1)
    assert gm.log == [json.dumps(signed, sort_keys=True)]  # unchanged, signature and all
    assert report.erased == 1 and [m.content for m in gm.stored.values()] == ["b"]
    again = importer.import_file(gm, path, progress=False)  # type: ignore[arg-type]
    assert (again.receipts_restored, again.receipts_held) == (0, 1)
