"""In-memory leases (``Leases``), as ``graphmem/stores/redis/lease.py`` keeps them: one
holder per name until its lease runs out; the holder renews or releases it, no one else
can."""

from __future__ import annotations

import time

from tests.support.fakes.clock import Clock


class FakeLeases:
    def __init__(self, clock: Clock = time.time) -> None:
        self.clock = clock
        self._held: dict[str, tuple[str, float]] = {}

    def _current(self, name: str) -> str | None:
        held = self._held.get(name)
        if held is None or held[1] <= self.clock():
            self._held.pop(name, None)
            return None
        return held[0]

    async def hold(self, name: str, holder: str, seconds: float) -> bool:
        current = self._current(name)
        if current is not None and current != holder:
            return False
        self._held[name] = (holder, self.clock() + max(0.001, seconds))
        return True

    async def release(self, name: str, holder: str) -> None:
        if self._current(name) == holder:
            del self._held[name]

    async def holder(self, name: str) -> str | None:
        return self._current(name)
