"""The cache of search's in-memory scopes, without services: the byte-bounded LRU and the
marks of scopes too large to hold."""

from __future__ import annotations

import time
from typing import Any, cast

from graphmem.memory.search.scopecache import TOO_LARGE_MARKS, ByteLRU, ScopeCache
from graphmem.memory.writepath.changes import scope_key

DIM = 4


def test_the_lru_never_holds_more_bytes_than_its_bound() -> None:
    lru: ByteLRU[str, int] = ByteLRU(100)
    for n in range(20):
        assert lru.put(f"k{n}", n, 30)
        assert lru.bytes <= 100
    assert len(lru) == 3 and lru.bytes == 90
    assert [k for k in ("k17", "k18", "k19") if k in lru] == ["k17", "k18", "k19"]


def test_the_lru_drops_the_least_recently_used_first() -> None:
    lru: ByteLRU[str, str] = ByteLRU(100)
    for key in "abc":
        lru.put(key, key, 30)
    assert lru.get("a") == "a"  # a is now the most recent
    lru.put("d", "d", 30)
    assert "b" not in lru and {"a", "c", "d"} <= {k for k in "abcd" if k in lru}


def test_the_lru_refuses_a_value_larger_than_its_bound_and_replaces_in_place() -> None:
    lru: ByteLRU[str, str] = ByteLRU(100)
    lru.put("a", "a", 60)
    assert not lru.put("huge", "x", 101)
    assert "huge" not in lru and lru.bytes == 60
    lru.put("a", "a2", 10)
    assert lru.get("a") == "a2" and lru.bytes == 10
    lru.pop("a")
    assert lru.bytes == 0 and len(lru) == 0


def test_too_large_marks_expire_and_stay_bounded() -> None:
    cache = ScopeCache(cast(Any, None), cast(Any, object()), DIM, too_large_for=60.0)
    now = time.monotonic()
    cache._not_held(("t", scope_key(None, "a")), now)
    assert not cache.likely("t", None, "a") and cache.likely("t", None, "b")
    cache._not_held(("t", scope_key(None, "a")), now - 61)  # marked a minute ago
    assert cache.likely("t", None, "a") and not cache._too_large  # expired, and dropped
    for n in range(TOO_LARGE_MARKS):  # scopes marked once and never searched again
        cache._not_held(("t", scope_key(f"s{n}", None)), now - 61)
    cache._not_held(("t", scope_key(None, "c")), now)
    assert list(cache._too_large) == [("t", scope_key(None, "c"))]
