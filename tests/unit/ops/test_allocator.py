"""glibc settings for long-running processes (``graphmem/ops/allocator.py``)."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from graphmem.ops import allocator


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator")
def test_tune_sets_the_allocator_for_this_process_and_its_children_and_trims() -> None:
    assert allocator.tune(trim_seconds=0.01)
    assert os.environ["MALLOC_MMAP_THRESHOLD_"] == str(allocator.MMAP_THRESHOLD)
    assert os.environ["MALLOC_ARENA_MAX"] == str(allocator.ARENAS)
    trimmer = [t for t in threading.enumerate() if t.name == "malloc-trim"]
    assert trimmer and trimmer[0].daemon and trimmer[0].is_alive()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator")
def test_the_heap_metric_counts_the_blocks_held() -> None:
    import re

    from graphmem.metrics import Metrics

    def in_use() -> float:
        text = Metrics().exposition().decode()
        states = dict(re.findall(r'graphmem_heap_bytes\{state="(\w+)"\} (\S+)', text))
        assert set(states) == {"in_use", "free", "mapped"}
        return float(states["in_use"])

    before = in_use()
    held = [bytearray(64 * 1024) for _ in range(64)]  # 4 MB below the mmap threshold
    assert in_use() - before >= 3 * 2**20
    del held
