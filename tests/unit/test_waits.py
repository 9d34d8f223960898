"""One request's deliberate waits draw on one allowance (graphmem/waits.py)."""

from __future__ import annotations

import asyncio

from graphmem import waits


async def _wait(seconds: float) -> float:
    with waits.budget(seconds) as granted:
        await asyncio.sleep(granted)
    return granted


async def test_without_an_allowance_each_wait_is_as_long_as_asked() -> None:
    assert [await _wait(0.05), await _wait(0.05)] == [0.05, 0.05]


async def test_waits_in_one_request_and_in_the_tasks_it_starts_share_its_allowance() -> None:
    with waits.allowance(0.1):
        first = await _wait(0.08)
        # the tasks gather starts carry the request's context, and so its allowance
        rest = await asyncio.gather(_wait(0.08), _wait(0.08))
        after = await _wait(0.08)
    assert first == 0.08
    assert all(0 < r <= 0.03 for r in rest)  # what the first left, each
    assert after == 0.0
