"""The pieces of search's in-memory scopes that need no services: the byte-bounded LRU,
the view's arithmetic, and reading a scope's change log."""

from __future__ import annotations

import time
from typing import Any, cast

import numpy as np

from graphmem.memory.search.scopecache import TOO_LARGE_MARKS, ByteLRU, ScopeCache
from graphmem.memory.search.scopeview import ScopeView
from graphmem.memory.writepath.changes import scope_key
from graphmem.stores.models import MemoryRows
from graphmem.stores.redis.versions import _changed_since

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


def unit(*v: float) -> bytes:
    a = np.asarray(v, dtype=np.float32)
    return (a / np.linalg.norm(a)).astype("<f4").tobytes()


def rows(ids: list[str], vectors: list[bytes | None], **extra: list) -> MemoryRows:  # type: ignore[type-arg]
    n = len(ids)
    return MemoryRows(
        ids=ids,
        sessions=extra.get("sessions", ["s"] * n),
        users=extra.get("users", ["u"] * n),
        seqs=extra.get("seqs", list(range(n))),
        types=extra.get("types", ["message"] * n),
        tiers=extra.get("tiers", ["cold"] * n),
        vectors=vectors,
        sentences=extra.get("sentences", [None] * n),
    )


def test_a_view_ranks_by_own_cosine_and_scores_the_best_sentence() -> None:
    sentences = np.asarray([[0, 1, 0, 0], [1, 0, 0, 0]], dtype="<f2").tobytes()
    view = ScopeView.from_rows(
        rows(
            ["a", "b", "c", "d"],
            [unit(1, 0, 0, 0), unit(1, 1, 0, 0), unit(0, 0, 1, 0), None],
            sentences=[None, sentences, None, None],
        ),
        DIM,
    )
    query = np.asarray([1, 0, 0, 0], dtype=np.float32)
    own = view.cosines(query)
    best = view.best(range(4), own, query)
    assert np.isclose(best[1], 1.0) and own[1] < 1.0  # its second sentence matches exactly
    assert np.allclose(view.best([3, 1, 0], own, query), best[[3, 1, 0]])
    order = [view.id_at(i) for i in view.nearest(own, view.mask(["cold"]), 10)]
    assert order == ["a", "b", "c"]  # d has no vector yet: never a vector hit


def test_a_view_masks_tiers_types_and_users_and_walks_to_neighbouring_turns() -> None:
    view = ScopeView.from_rows(
        rows(
            ["t1", "t2", "t3", "t4", "x"],
            [unit(1, 0, 0, 0)] * 5,
            seqs=[1, 2, 3, 4, 1],
            sessions=["s", "s", "s", "s", "other"],
            tiers=["cold", "hot", "warm", "cold", "cold"],
            users=["u", "u", "u", "u", "v"],
        ),
        DIM,
    )
    graph_tiers = view.mask(["warm", "cold"])
    assert [view.id_at(i) for i in np.flatnonzero(graph_tiers)] == ["t1", "t3", "t4", "x"]
    assert [view.id_at(i) for i in np.flatnonzero(view.mask(["cold"], user_id="u"))] == ["t1", "t4"]
    # t2 is hot: t3's turn before it, within the tiers searched, is t1
    t3 = view.rows_of(["t3"])[0]
    assert t3 is not None
    assert [view.id_at(i) for i in view.neighbours(t3, 1, graph_tiers)] == ["t1", "t4"]


def test_a_patched_view_equals_one_read_whole() -> None:
    sentences = np.asarray([[0, 1, 0, 0], [0, 0, 1, 0]], dtype="<f2").tobytes()
    before = rows(
        ["a", "b", "c"],
        [unit(1, 0, 0, 0), unit(0, 1, 0, 0), unit(0, 0, 1, 0)],
        sentences=[sentences, None, sentences],
    )
    view = ScopeView.from_rows(before, DIM)
    # b deleted, c re-embedded, d added
    changed = rows(
        ["c", "d"],
        [unit(0, 0, 0, 1), unit(1, 1, 1, 1)],
        seqs=[2, 3],
        sentences=[None, sentences],
    )
    patched = view.patched({"b", "c", "d"}, changed)
    whole = ScopeView.from_rows(
        rows(
            ["a", "c", "d"],
            [unit(1, 0, 0, 0), unit(0, 0, 0, 1), unit(1, 1, 1, 1)],
            seqs=[0, 2, 3],
            sentences=[sentences, None, sentences],
        ),
        DIM,
    )
    query = np.asarray([0.5, 0.5, 0.5, 0.5], dtype=np.float32)
    assert [patched.id_at(i) for i in range(len(patched))] == [
        whole.id_at(i) for i in range(len(whole))
    ]
    assert np.allclose(patched.cosines(query), whole.cosines(query))
    every = range(len(whole))
    assert np.allclose(
        patched.best(every, patched.cosines(query), query),
        whole.best(every, whole.cosines(query), query),
    )


def test_the_change_log_is_read_only_when_it_reaches_back_unbroken() -> None:
    log = ["1>2|a", "2>5|b,c", "5>9|d"]
    assert _changed_since(log, "2", "9") == {"b", "c", "d"}
    assert _changed_since(log, "5", "9") == {"d"}
    assert _changed_since(log, "0", "9") is None  # older than the log remembers
    assert _changed_since(["2>5|*", "5>9|d"], "2", "9") is None  # a change of everything
    assert _changed_since(["2>5|b", ">9|d"], "2", "9") is None  # an expired key between


def test_a_patched_view_finds_rows_users_and_neighbours_like_one_read_whole() -> None:
    v = unit(1, 0, 0, 0)
    before = rows(
        ["m-1", "m-22", "m-333"],
        [v] * 3,
        seqs=[1, 2, 3],
        sessions=["s", "s", "s"],
        users=["u", "u", "u"],
    )
    # m-22 deleted; a new session of a new user, and a longer id in the old session
    changed = rows(
        ["n-1", "m-4444"],
        [v] * 2,
        seqs=[1, 4],
        sessions=["s2", "s"],
        users=["w", "u"],
    )
    patched = ScopeView.from_rows(before, DIM).patched({"m-22", "n-1", "m-4444"}, changed)
    assert patched.rows_of(["m-22", "m-4444", "nope", "m-1"]) == [None, 3, None, 0]
    assert [patched.id_at(i) for i in np.flatnonzero(patched.mask(["cold"], user_id="w"))] == [
        "n-1"
    ]
    assert not patched.mask(["cold"], user_id="nobody").any()
    everything = patched.mask(["cold"])
    row = patched.rows_of(["m-333"])[0]
    assert row is not None
    assert [patched.id_at(i) for i in patched.neighbours(row, 2, everything)] == [
        "m-1",
        "m-4444",
    ]
    turn = patched.turn(patched.rows_of(["n-1"])[0] or 0)
    assert (turn.id, turn.session_id, turn.user_id, turn.seq) == ("n-1", "s2", "w", 1)
