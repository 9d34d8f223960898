"""The worker enriches what it has admitted in calls of about one embedding batch, the
tenants taking turns."""

from __future__ import annotations

from graphmem.memory.worker import chunks, interleave, next_chunk
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


def tenant_job(tenant: str, n: int, size: int) -> tuple[EnrichmentJob, list[MemoryItem]]:
    made, items = job(n, size)
    return made.model_copy(update={"tenant": tenant, "entry": f"{tenant}-{n}"}), items


def test_a_tenants_backlog_admitted_first_does_not_fill_the_next_call() -> None:
    # issue 29: another tenant's job admitted after a backlog went into the last call
    backlog = [tenant_job("big", n, 20) for n in range(40)]
    batch = [*backlog, tenant_job("small", 0, 1)]
    first = chunks(batch, 256)[0]
    assert "small-0" in [j.entry for j, _ in first]
    assert sum(len(items) for _, items in first) <= 256 + 20
    grouped = chunks(batch, 256)
    assert sorted(j.entry for c in grouped for j, _ in c) == sorted(j.entry for j, _ in batch)
    # each tenant's jobs keep their order
    order = [j.entry for c in grouped for j, _ in c if j.tenant == "big"]
    assert order == [j.entry for j, _ in backlog]


def test_tenants_take_turns_the_one_served_longest_ago_first() -> None:
    pending = [tenant_job(t, n, 100) for n in range(3) for t in ("a", "b", "c")]
    chunk, rest = next_chunk(pending, 200, served={"a": 5, "b": 3})
    # c was never served, then b (call 3), then a (call 5)
    assert [j.entry for j, _ in chunk] == ["b-0", "c-0"]
    assert len(rest) == len(pending) - 2
    chunk, _ = next_chunk(pending, 150, served={"a": 1, "b": 3, "c": 2})
    assert [j.entry for j, _ in chunk] == ["a-0", "c-0"]


def test_a_read_is_admitted_a_tenant_at_a_time() -> None:
    jobs = [tenant_job("big", n, 20)[0] for n in range(5)] + [tenant_job("small", 0, 1)[0]]
    order = [j.entry for j in interleave(jobs)]
    assert order == ["big-0", "small-0", "big-1", "big-2", "big-3", "big-4"]
