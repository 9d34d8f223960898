"""glibc's allocator, set for a process that keeps replacing multi-megabyte arrays.

Search keeps each scope's vectors as numpy arrays and replaces them on every write to the
scope (``memory/search/scopeview.py``). glibc serves an allocation above its mmap threshold
with a mapping of its own, returned to the system on free, but raises that threshold to
the size of every such block freed (up to 32 MB): after a few views have been replaced,
new ones come from the heap, whose free space between live blocks is never given back.
Under constant writes the process's RSS then crept by 10-20 MB a minute while its live
memory stayed at the search cache's bound. A fixed threshold keeps large blocks mapped.

Smaller blocks still come from the heaps, one arena per thread that allocates (glibc
creates up to eight per core: the event loop, and the threads embedding, NER and the
Neo4j driver use), and a heap keeps the pages its freed blocks leave until
``malloc_trim`` gives them back. With memray, the live allocations of a server under the
soak's load stayed at the search cache's bound while its RSS still rose about 4 MB a
minute. So the arenas are capped at two, and a thread trims the heaps every 15 seconds:
in a soak, what a trim gave back had piled up again within the minute (2 to 14 MB),
and the RSS a client sees is the pile at that moment. A trim walks the heaps' free
lists: 2 ms, up to 13 ms on a 100 MB heap left full of holes, with Python's lock
released (ctypes) and only the allocator's held.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import os
import sys
import threading
import time
from collections.abc import Callable

log = logging.getLogger("graphmem")

#: blocks from this size up get mappings of their own (glibc's initial threshold)
MMAP_THRESHOLD = 128 * 1024
#: heaps for the process's threads to allocate from
ARENAS = 2
#: seconds between two ``malloc_trim`` calls
TRIM_SECONDS = 15.0
# mallopt's parameter numbers (malloc.h)
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8


def tune(trim_seconds: float | None = TRIM_SECONDS) -> bool:
    """Fix the mmap threshold and cap the arenas in this process, and (through the
    environment glibc reads at start-up) in the processes it starts; with
    ``trim_seconds``, trim the heaps that often from a daemon thread. False where there
    is no glibc."""
    if not sys.platform.startswith("linux"):
        return False
    os.environ.setdefault("MALLOC_MMAP_THRESHOLD_", str(MMAP_THRESHOLD))
    os.environ.setdefault("MALLOC_ARENA_MAX", str(ARENAS))
    try:
        libc = ctypes.CDLL("libc.so.6")
        mallopt, trim = libc.mallopt, libc.malloc_trim
    except (OSError, AttributeError):  # musl and other C libraries
        return False
    done = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_ARENA_MAX, ARENAS))
    if not done:
        log.warning("could not set glibc's mmap threshold and arena count")
    if trim_seconds:
        threading.Thread(
            target=_trim_every, args=(trim, trim_seconds), name="malloc-trim", daemon=True
        ).start()
    return done


def _trim_every(trim: Callable[[int], int], seconds: float) -> None:
    while True:
        time.sleep(seconds)
        trim(0)


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def heap() -> dict[str, int] | None:
    """glibc's own account of the process's heap memory, in bytes: ``in_use`` by live
    blocks, ``free`` blocks the heaps keep (resident until trimmed), ``mapped`` blocks
    with mappings of their own. Tells a leak (``in_use`` rising) from fragmentation
    (``free`` rising) when the RSS grows. None where there is no glibc 2.33+."""
    mallinfo2 = _mallinfo2()
    if mallinfo2 is None:
        return None
    info = mallinfo2()
    return {"in_use": info.uordblks, "free": info.fordblks, "mapped": info.hblkhd}


@functools.cache
def _mallinfo2() -> Callable[[], _MallInfo2] | None:
    """glibc's ``mallinfo2``, looked up once."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        mallinfo2 = ctypes.CDLL("libc.so.6").mallinfo2
    except (OSError, AttributeError):
        return None
    mallinfo2.restype = _MallInfo2
    return mallinfo2
