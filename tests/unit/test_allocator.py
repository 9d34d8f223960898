"""glibc settings for long-running processes (``graphmem/allocator.py``)."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from graphmem import allocator


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator")
def test_tune_sets_the_allocator_for_this_process_and_its_children_and_trims() -> None:
    assert allocator.tune(trim_seconds=0.01)
    assert os.environ["MALLOC_MMAP_THRESHOLD_"] == str(allocator.MMAP_THRESHOLD)
    assert os.environ["MALLOC_ARENA_MAX"] == str(allocator.ARENAS)
    trimmer = [t for t in threading.enumerate() if t.name == "malloc-trim"]
    assert trimmer and trimmer[0].daemon and trimmer[0].is_alive()
