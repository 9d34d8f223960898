"""A view's clocks (``scopeclocks.py``): the rows a moment sees are those the graph's
predicate (memory/text_hits) keeps, row by row, through building, paging and patching."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import numpy as np

from graphmem.domain.moments import Moment, micros
from graphmem.memory.search.scopeclocks import Clocks
from graphmem.memory.search.scopeview import ScopeView
from graphmem.stores.models import RETRACTED_EVER, MemoryRows

START = datetime(2024, 1, 1, tzinfo=UTC)


def at(n: int) -> datetime:
    return START + timedelta(seconds=n)


def history(rng: random.Random, n: int, prefix: str = "m") -> MemoryRows:
    recorded: list[int | None] = []
    occurred: list[int | None] = []
    retracted: list[int | None] = []
    spans: list[tuple[tuple[int, int], ...]] = []
    for _ in range(n):
        r = rng.randrange(100)
        recorded.append(None if rng.random() < 0.05 else micros(at(r)))
        occurred.append(None if rng.random() < 0.05 else micros(at(rng.randrange(100))))
        retracted.append(
            micros(at(r + rng.randrange(1, 50)))
            if rng.random() < 0.3
            else (RETRACTED_EVER if rng.random() < 0.02 else None)
        )
        start = r + rng.randrange(1, 30)
        spans.append(
            ((micros(at(start)), micros(at(start + rng.randrange(1, 20)))),)
            if rng.random() < 0.2
            else ()
        )
    return MemoryRows(
        ids=[f"{prefix}-{i}" for i in range(n)],
        sessions=["s"] * n,
        users=["u"] * n,
        seqs=list(range(n)),
        types=["message"] * n,
        tiers=["cold"] * n,
        vectors=[None] * n,
        sentences=[None] * n,
        recorded=recorded,
        occurred=occurred,
        retracted=retracted,
        spans=spans,
    )


def graph_sees(rows: MemoryRows, row: int, moment: Moment) -> bool:
    """The Cypher predicate, written out: a null comparison keeps nothing."""
    recorded, occurred = rows.recorded[row], rows.occurred[row]
    retracted, spans = rows.retracted[row], rows.spans[row]
    a = None if moment.as_of is None else micros(moment.as_of)
    v = None if moment.valid_at is None else micros(moment.valid_at)
    if a is not None and (recorded is None or recorded > a):
        return False
    if v is not None and (occurred is None or occurred > v):
        return False
    if moment.history:
        return True
    if a is None:
        return retracted is None
    return (retracted is None or retracted > a) and not any(s <= a < e for s, e in spans)


def moments(rng: random.Random) -> list[Moment]:
    out = [Moment(), Moment(history=True)]
    for _ in range(40):
        a = at(rng.randrange(-5, 160)) if rng.random() < 0.7 else None
        v = at(rng.randrange(-5, 110)) if rng.random() < 0.5 else None
        out.append(Moment(a, v, rng.random() < 0.3))
    return out


def seen(view: ScopeView, moment: Moment) -> list[str]:
    return sorted(view.id_at(int(r)) for r in np.flatnonzero(view.mask(["cold"], moment=moment)))


def test_a_moment_sees_what_the_graph_predicate_keeps() -> None:
    rng = random.Random(7)
    rows = history(rng, 300)
    view = ScopeView.from_rows(rows, 4)
    for moment in moments(rng):
        expected = sorted(rows.ids[i] for i in range(300) if graph_sees(rows, i, moment))
        assert seen(view, moment) == expected, moment


def test_pages_and_patches_keep_each_rows_clocks() -> None:
    rng = random.Random(11)
    first, second = history(rng, 120, "a"), history(rng, 80, "b")
    whole = MemoryRows.joined([first, second])
    paged = ScopeView.from_rows(first, 4)
    # replace half of the first rows by themselves with other clocks, add the second
    changed = history(random.Random(3), 120, "a").select([i % 2 == 0 for i in range(120)])
    patched = paged.patched(
        set(changed.ids) | set(second.ids), MemoryRows.joined([changed, second])
    )
    kept = first.select([i % 2 == 1 for i in range(120)])
    truth = MemoryRows.joined([kept, changed, second])
    for moment in moments(rng):
        expected = sorted(
            truth.ids[i] for i in range(len(truth.ids)) if graph_sees(truth, i, moment)
        )
        assert seen(patched, moment) == expected, moment
    assert len(ScopeView.from_rows(whole, 4)) == 200


def test_a_view_counts_its_clocks_and_a_current_read_needs_no_mask_without_retractions() -> None:
    rows = history(random.Random(5), 50)
    held = MemoryRows.joined([rows]).select([r is None for r in rows.retracted])
    clocks = Clocks.of(held)
    assert clocks.seen(Moment()) is None
    view = ScopeView.from_rows(rows, 4)
    assert view.clocks.nbytes >= 3 * 8 * 50
    without = ScopeView.from_rows(
        MemoryRows(
            rows.ids,
            rows.sessions,
            rows.users,
            rows.seqs,
            rows.types,
            rows.tiers,
            rows.vectors,
            rows.sentences,
        ),
        4,
    )
    assert view.nbytes - without.nbytes >= view.clocks.nbytes - without.clocks.nbytes > 0
