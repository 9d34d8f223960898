"""Counting a long memory's tokens must not hold the event loop for its whole length:
the tokenizer keeps the GIL while it reads (issue 29: a 20 KB add held the loop 20 to
35 ms at a time, and another tenant's requests waited behind each)."""

from __future__ import annotations

import asyncio
import time

from graphmem.enrich.tokens import SLICE_CHARS, TokenCounter, slices
from tests.unit.test_ner_bounds import conversation


def test_slices_cut_after_whitespace_and_keep_every_character() -> None:
    text = conversation(20_000)
    pieces = slices(text)
    assert "".join(pieces) == text
    assert all(len(p) <= SLICE_CHARS for p in pieces)
    assert all(p[-1].isspace() for p in pieces[:-1])
    run = "'s" * 3000  # no whitespace at all: cut at the size
    assert [len(p) for p in slices(run)] == [2000, 2000, 2000]


async def test_the_count_is_the_whole_texts_and_the_loop_runs_between_slices() -> None:
    counter = TokenCounter()
    texts = [conversation(20_000), "short one", conversation(5_000)]
    ticks = 0
    longest = 0.0

    async def other_requests() -> None:
        nonlocal ticks, longest
        last = time.perf_counter()
        while True:
            await asyncio.sleep(0)
            now = time.perf_counter()
            ticks, longest = ticks + 1, max(longest, now - last)
            last = now

    beside = asyncio.create_task(other_requests())
    await asyncio.sleep(0)
    started = time.perf_counter()
    counts = await counter.count_on_loop(texts)
    spent = time.perf_counter() - started
    beside.cancel()
    assert counts == counter.count_many(texts)  # the same as read whole
    # the loop ran between slices: a turn for about every 2,000 of the 25,000 characters
    assert ticks >= 8, ticks
    assert longest < spent / 4, (longest, spent)


def test_small_batches_are_counted_as_before() -> None:
    counter = TokenCounter()
    assert asyncio.run(counter.count_on_loop(["hello world", ""])) == [2, 1]
