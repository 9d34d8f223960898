"""A scope held in memory (``ScopeView``): its arithmetic by cosine and by BM25, masks,
neighbouring turns, and patching, which must equal a view read whole. BM25 is checked
against Lucene's formula written out by hand, over the scope's own statistics."""

from __future__ import annotations

import math

import numpy as np

from graphmem.enrich import lexical
from graphmem.memory.search.querytext import STOPWORDS
from graphmem.memory.search.scopescoring import BM25_B, BM25_K1
from graphmem.memory.search.scopeview import ScopeView
from graphmem.stores.models import MemoryRows

DIM = 4


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
    assert [view.id_at(int(i)) for i in np.flatnonzero(graph_tiers)] == ["t1", "t3", "t4", "x"]
    assert [view.id_at(int(i)) for i in np.flatnonzero(view.mask(["cold"], user_id="u"))] == [
        "t1",
        "t4",
    ]
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
    assert [patched.id_at(int(i)) for i in np.flatnonzero(patched.mask(["cold"], user_id="w"))] == [
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


TEXTS = [
    "We went camping by the lake last summer.",
    "Melanie's kids love camping; the kids camped twice.",
    "I painted a sunrise over the lake.",
    "The support group met on Tuesday.",
    "Caroline's support group helped her a lot, she said.",
    "Nothing to see here at all.",
]


def analysed_rows(texts: list[str], **extra: list) -> MemoryRows:  # type: ignore[type-arg]
    n = len(texts)
    vector = np.asarray([1, 0, 0, 0], dtype="<f4").tobytes()
    return MemoryRows(
        ids=extra.get("ids", [f"m{i}" for i in range(n)]),
        sessions=extra.get("sessions", ["s"] * n),
        users=extra.get("users", ["u"] * n),
        seqs=extra.get("seqs", list(range(n))),
        types=["message"] * n,
        tiers=extra.get("tiers", ["cold"] * n),
        vectors=[vector] * n,
        sentences=[None] * n,
        terms=extra.get("terms", [lexical.term_bytes(t) for t in texts]),
    )


def by_hand(texts: list[str], query: str) -> list[float]:
    """Lucene's BM25 (no k1 + 1 factor, idf = ln(1 + (N - df + 0.5) / (df + 0.5))) over
    the stems of each text, summed over the query's distinct stems."""
    docs = [lexical.stems(lexical.words(t)) for t in texts]
    counted = [d for d in docs if d]
    avgdl = sum(len(d) for d in counted) / len(counted)
    terms = dict.fromkeys(
        lexical.stems(lexical.words(query), lexical.DOCUMENT_STOPWORDS | STOPWORDS)
    )
    out = []
    for doc in docs:
        score = 0.0
        for term in terms:
            tf = doc.count(term)
            df = sum(1 for d in counted if term in d)
            if tf:
                idf = math.log(1 + (len(counted) - df + 0.5) / (df + 0.5))
                score += idf * tf / (tf + BM25_K1 * (1 - BM25_B + BM25_B * len(doc) / avgdl))
        out.append(score)
    return out


def test_a_view_scores_bm25_as_lucene_would_with_the_scope_s_own_statistics() -> None:
    view = ScopeView.from_rows(analysed_rows(TEXTS), DIM)
    assert view.lexical
    for query in ("camping at the lake", "support group", "kids", "sunrise painting"):
        found, scores = view.bm25(lexical.query_hashes(query, STOPWORDS), view.mask(["cold"]), 10)
        expected = by_hand(TEXTS, query)
        assert np.allclose(scores, [expected[r] for r in found], rtol=1e-5)
        assert sorted(found.tolist()) == [i for i, s in enumerate(expected) if s > 0]
        assert list(scores) == sorted(scores, reverse=True)


def test_bm25_respects_the_mask_the_limit_and_breaks_ties_by_conversation_order() -> None:
    texts = ["kids"] * 4 + ["nothing"]
    view = ScopeView.from_rows(
        analysed_rows(texts, seqs=[3, 1, 2, 0, 4], tiers=["cold", "cold", "hot", "cold", "cold"]),
        DIM,
    )
    query = lexical.query_hashes("kids", STOPWORDS)
    found, _ = view.bm25(query, view.mask(["cold"]), 10)
    assert [view.id_at(r) for r in found] == ["m3", "m1", "m0"]  # seq order; m2 is hot
    found, _ = view.bm25(query, view.mask(["cold", "hot"]), 2)
    assert [view.id_at(r) for r in found] == ["m3", "m1"]
    assert len(view.bm25(lexical.query_hashes("zebra", STOPWORDS), view.mask(["cold"]), 5)[0]) == 0


def test_a_view_with_an_unanalysed_memory_is_not_lexical_and_patching_keeps_terms_aligned() -> None:
    old = analysed_rows(
        TEXTS[:3], terms=[lexical.term_bytes(TEXTS[0]), None, lexical.term_bytes(TEXTS[2])]
    )
    view = ScopeView.from_rows(old, DIM)
    assert not view.lexical  # searched through Lucene until migrate analyses m1
    # m1 analysed (by migrate) and m5 added: patched, the view equals one read whole
    changed = analysed_rows([TEXTS[1], TEXTS[5]], ids=["m1", "m5"], seqs=[1, 5])
    patched = view.patched({"m1", "m5"}, changed)
    whole = ScopeView.from_rows(
        analysed_rows(
            [TEXTS[0], TEXTS[2], TEXTS[1], TEXTS[5]],
            ids=["m0", "m2", "m1", "m5"],
            seqs=[0, 2, 1, 5],
        ),
        DIM,
    )
    assert patched.lexical
    query = lexical.query_hashes("kids camping by the lake", STOPWORDS)
    a, a_scores = patched.bm25(query, patched.mask(["cold"]), 10)
    b, b_scores = whole.bm25(query, whole.mask(["cold"]), 10)
    assert [patched.id_at(r) for r in a] == [whole.id_at(r) for r in b]
    assert np.allclose(a_scores, b_scores)
    # and a memory deleted from it takes its words along
    gone = patched.patched({"m1"}, analysed_rows([]))
    found, _ = gone.bm25(lexical.query_hashes("kids", STOPWORDS), gone.mask(["cold"]), 10)
    assert len(found) == 0
