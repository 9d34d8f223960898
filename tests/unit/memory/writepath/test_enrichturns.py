"""The worker embeds, and reads for entities, in calls of about ``call_seconds`` of
estimated work, the tenants taking turns an item at a time (a call of 256 of one
tenant's long memories would keep another tenant's new memory unfound for over 15 s)."""

from __future__ import annotations

import pytest

from graphmem.memory.writepath.enrichturns import (
    ITEM_OVERHEAD_CHARS,
    CostRate,
    Piece,
    Turns,
    next_call,
)
from graphmem.stores.models import EnrichmentJob


class Item:
    """Only what the chooser reads of an item: its tenant (through the job) and text."""

    def __init__(self, content: str) -> None:
        self.content = content


def piece(tenant: str, n: int, chars: int = 10) -> Piece:
    job = EnrichmentJob(entry=f"{tenant}-{n}", tenant=tenant, session_id="s", ids=[f"m{n}"])
    return Piece(job, Item("x" * chars))  # type: ignore[arg-type]


def entries(pieces: list[Piece]) -> list[str]:
    return [p.job.entry for p in pieces]


def test_a_call_closes_at_its_item_count() -> None:
    pending = [piece("t", n) for n in range(10)]
    chunk, rest = next_call(pending, 4, 100.0, lambda p: 0.0)
    assert entries(chunk) == ["t-0", "t-1", "t-2", "t-3"]
    assert entries(rest) == [f"t-{n}" for n in range(4, 10)]


def test_a_call_closes_once_its_estimated_cost_reaches_the_seconds() -> None:
    pending = [piece("t", n) for n in range(10)]
    chunk, _ = next_call(pending, 256, 0.3, lambda p: 0.1)
    assert entries(chunk) == ["t-0", "t-1", "t-2"]
    # one item costlier than a whole call still goes, alone
    chunk, _ = next_call(pending, 256, 0.3, lambda p: 5.0)
    assert entries(chunk) == ["t-0"]
    assert next_call([], 256, 0.3, lambda p: 0.1) == ([], [])


def test_a_tenants_long_memories_leave_room_for_another_tenants_new_one() -> None:
    rate = CostRate(1e-4)
    backlog = [piece("big", n, chars=20_000) for n in range(256)]
    pending = [*backlog, piece("small", 0, chars=40)]
    turns = Turns()
    first, rest = next_call(pending, 256, 0.3, rate.estimate, turns)
    # before: the whole call of 256 long memories (minutes of NER) went ahead of it; now
    # it goes first, alone (both tenants level, it is done sooner), and the long ones
    # follow one a call
    assert entries(first) == ["small-0"]
    second, rest = next_call(rest, 256, 0.3, rate.estimate, turns)
    assert entries(second) == ["big-0"]
    assert entries(rest) == entries(backlog[1:])  # each tenant's items keep their order


def test_the_tenant_given_least_work_goes_next() -> None:
    pending = [piece(t, n) for n in range(3) for t in ("a", "b", "c")]
    turns = Turns(given={"a": 0.5, "b": 0.2})
    # c is new: it comes in level with the least served (b), not ahead of everyone
    chunk, rest = next_call(pending, 2, 100.0, lambda p: 0.1, turns)
    assert entries(chunk) == ["b-0", "c-0"]
    assert turns.given == pytest.approx({"a": 0.2, "b": 0.0, "c": 0.0})
    chunk, rest = next_call(rest, 2, 100.0, lambda p: 0.1, turns)
    assert entries(chunk) == ["b-1", "c-1"]
    chunk, rest = next_call(rest, 2, 100.0, lambda p: 0.1, turns)
    assert entries(chunk) == ["b-2", "c-2"]  # a was given 0.1 s more than they were
    chunk, _ = next_call(rest, 2, 100.0, lambda p: 0.1, turns)
    assert entries(chunk) == ["a-0", "a-1"]


def test_short_memories_get_as_much_work_as_another_tenants_long_ones() -> None:
    # item by item, a tenant adding two short memories a second would get one per call
    # beside one of another tenant's 20 KB memories, and fall further behind
    long = [piece("big", n, chars=20_000) for n in range(5)]
    short = [piece("small", n, chars=40) for n in range(20)]
    cost = CostRate(5e-5).estimate  # about 1 s a long memory, 12 ms a short one
    turns = Turns()
    first, rest = next_call([*long, *short], 256, 0.3, cost, turns)
    assert entries(first) == entries(short)  # all of them, then big's turn
    second, rest = next_call(rest, 256, 0.3, cost, turns)
    assert entries(second) == ["big-0"]
    third, rest = next_call([*rest, piece("small", 20, chars=40)], 256, 0.3, cost, turns)
    assert entries(third) == ["small-20"]  # back level with big, and done sooner
    assert entries(rest) == entries(long[1:])


def test_a_short_memory_never_waits_in_a_call_for_another_tenants_long_one() -> None:
    # C's new memories, packed into a call after B's 20 KB one, would wait for its
    # embedding (1 to 2 s) before they were found by meaning
    cost = CostRate(5e-5).estimate  # about 1 s the long one, 12 ms the short one
    pending = [piece("small", 0, chars=40), piece("big", 0, chars=20_000)]
    first, rest = next_call(pending, 256, 0.3, cost, Turns())
    assert entries(first) == ["small-0"]
    assert entries(rest) == ["big-0"]  # its own call, next


def test_a_tenant_with_nothing_waiting_is_forgotten_by_the_turns() -> None:
    turns = Turns()
    next_call([piece("a", 0), piece("b", 0)], 256, 100.0, lambda p: 1.0, turns)
    assert turns.given == {}  # nothing of theirs is left: what they were given is moot


def test_every_piece_is_taken_once_over_the_calls() -> None:
    pending = [piece(t, n, chars=100 * n) for n in range(20) for t in ("a", "b", "c")]
    rate = CostRate(1e-4)
    turns = Turns()
    seen: list[str] = []
    rest = pending
    while rest:
        chunk, rest = next_call(rest, 7, 0.3, rate.estimate, turns)
        assert chunk
        seen += entries(chunk)
    assert sorted(seen) == sorted(entries(pending))


def test_the_cost_rate_follows_what_calls_take() -> None:
    rate = CostRate(1e-4, cap_chars=1000)
    long, short = piece("t", 0, chars=50_000), piece("t", 1, chars=0)
    assert rate.chars(long.item) == 1000 + ITEM_OVERHEAD_CHARS  # past the cap, no dearer
    assert rate.chars(short.item) == ITEM_OVERHEAD_CHARS
    for _ in range(30):  # the calls take a tenth of what was first estimated
        rate.learn([long, short], 1e-5 * (rate.chars(long.item) + rate.chars(short.item)))
    assert 0.9e-5 < rate.seconds_per_char < 1.2e-5
    before = rate.seconds_per_char
    rate.learn([], 5.0)  # an empty call teaches nothing
    assert rate.seconds_per_char == before
