"""The time the fakes' expiries are measured in: the wall clock, or one a test moves."""

from __future__ import annotations

import time
from collections.abc import Callable

Clock = Callable[[], float]


class ManualClock:
    """Seconds since the epoch that move only when a test says so (``advance``), so that
    TTLs and idleness can be tested without sleeping. Starts at the wall clock's now:
    code that compares with ``time.time()`` itself sees the fakes' writes as recent."""

    def __init__(self, start: float | None = None) -> None:
        self.now = time.time() if start is None else start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds

    async def elapse(self, seconds: float) -> None:
        """``advance``, as the contracts let time pass (a real store sleeps)."""
        self.advance(seconds)
