"""`graphmem import` follows the tenant's enrichment backlog after adding (pure logic, over
a stand-in for the client's ``enrichment()``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from graphmem.client import Enrichment
from graphmem.transfer import importer


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
