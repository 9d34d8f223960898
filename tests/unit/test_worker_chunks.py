"""The worker enriches a read of many jobs in chunks of about one embedding batch."""

from __future__ import annotations

from graphmem.memory.worker import chunks
from graphmem.models import MemoryItem
from graphmem.stores.models import EnrichmentJob


def job(n: int, size: int) -> tuple[EnrichmentJob, list[MemoryItem]]:
    ids = [f"mem_{n}_{k}" for k in range(size)]
    items: list[MemoryItem] = [object()] * size  # type: ignore[list-item]  # only counted
    return EnrichmentJob(entry=f"{n}-0", tenant="t", session_id="s", ids=ids), items


def test_jobs_are_grouped_in_order_without_splitting_one() -> None:
    batch = [job(n, size) for n, size in enumerate([100, 100, 100, 300, 10, 10])]
    grouped = chunks(batch, 256)
    assert [[j.entry for j, _ in c] for c in grouped] == [
        ["0-0", "1-0", "2-0"],  # reaches 256 with the third job
        ["3-0"],  # one job larger than a chunk stays whole
        ["4-0", "5-0"],
    ]
    assert [j for c in grouped for j in c] == batch


def test_an_empty_read_gives_no_chunk() -> None:
    assert chunks([], 256) == []
