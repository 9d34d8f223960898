"""glibc's allocator, set for a process that keeps replacing multi-megabyte arrays.

Search keeps each scope's vectors as numpy arrays and replaces them on every write to the
scope (``memory/scopeview.py``). glibc serves an allocation above its mmap threshold
with a mapping of its own, returned to the system on free, but raises that threshold to
the size of every such block freed (up to 32 MB): after a few views have been replaced,
new ones come from the heap, whose free space between live blocks is never given back.
Under constant writes the process's RSS then crept by 10-20 MB a minute while its live
memory stayed at the search cache's bound. A fixed threshold keeps large blocks mapped.
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys

log = logging.getLogger("graphmem")

#: blocks from this size up get mappings of their own (glibc's initial threshold)
MMAP_THRESHOLD = 128 * 1024
_M_MMAP_THRESHOLD = -3  # mallopt's parameter number (malloc.h)


def tune() -> bool:
    """Fix the mmap threshold in this process, and (through the environment glibc reads
    at start-up) in the processes it starts. False where there is no glibc."""
    if not sys.platform.startswith("linux"):
        return False
    os.environ.setdefault("MALLOC_MMAP_THRESHOLD_", str(MMAP_THRESHOLD))
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):  # musl and other C libraries
        return False
    done = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))
    if not done:
        log.warning("could not fix glibc's mmap threshold")
    return done
