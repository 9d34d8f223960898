"""BM25 inside a scope held in memory: the analysis (enrich/lexical.py) and the scores a
view computes from its own statistics (ScopeView.bm25), against Lucene's formula
written out by hand."""

from __future__ import annotations

import math

import numpy as np

from graphmem.enrich import lexical
from graphmem.memory.search.querytext import STOPWORDS
from graphmem.memory.search.scopescoring import BM25_B, BM25_K1
from graphmem.memory.search.scopeview import ScopeView
from graphmem.stores.models import MemoryRows

DIM = 4
TEXTS = [
    "We went camping by the lake last summer.",
    "Melanie's kids love camping; the kids camped twice.",
    "I painted a sunrise over the lake.",
    "The support group met on Tuesday.",
    "Caroline's support group helped her a lot, she said.",
    "Nothing to see here at all.",
]


def rows(texts: list[str], **extra: list) -> MemoryRows:  # type: ignore[type-arg]
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


def test_words_are_lowercased_stemmed_and_lose_possessives_and_stopwords() -> None:
    assert lexical.words("Melanie's KIDS don't e-mail") == ["melanie", "kids", "don't", "e", "mail"]
    assert lexical.stems(lexical.words("The kids were camping in the lake")) == [
        "kid",
        "were",
        "camp",
        "lake",
    ]
    # a query also drops its own stopwords, and repeats count once
    query = lexical.query_hashes("What did the kids camp? Kids camping!", STOPWORDS)
    assert len(query) == 2
    assert set(query.tolist()) == set(lexical.hashes(["kid", "camp"]).tolist())
    stored = np.frombuffer(lexical.term_bytes("kids camping kids"), dtype="<u4")
    assert stored.tolist() == lexical.hashes(["kid", "camp", "kid"]).tolist()


def test_a_view_scores_bm25_as_lucene_would_with_the_scope_s_own_statistics() -> None:
    view = ScopeView.from_rows(rows(TEXTS), DIM)
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
        rows(texts, seqs=[3, 1, 2, 0, 4], tiers=["cold", "cold", "hot", "cold", "cold"]), DIM
    )
    query = lexical.query_hashes("kids", STOPWORDS)
    found, _ = view.bm25(query, view.mask(["cold"]), 10)
    assert [view.id_at(r) for r in found] == ["m3", "m1", "m0"]  # seq order; m2 is hot
    found, _ = view.bm25(query, view.mask(["cold", "hot"]), 2)
    assert [view.id_at(r) for r in found] == ["m3", "m1"]
    assert len(view.bm25(lexical.query_hashes("zebra", STOPWORDS), view.mask(["cold"]), 5)[0]) == 0


def test_a_view_with_an_unanalysed_memory_is_not_lexical_and_patching_keeps_terms_aligned() -> None:
    old = rows(TEXTS[:3], terms=[lexical.term_bytes(TEXTS[0]), None, lexical.term_bytes(TEXTS[2])])
    view = ScopeView.from_rows(old, DIM)
    assert not view.lexical  # searched through Lucene until migrate analyses m1
    # m1 analysed (by migrate) and m5 added: patched, the view equals one read whole
    changed = rows([TEXTS[1], TEXTS[5]], ids=["m1", "m5"], seqs=[1, 5])
    patched = view.patched({"m1", "m5"}, changed)
    whole = ScopeView.from_rows(
        rows(
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
    gone = patched.patched({"m1"}, rows([]))
    found, _ = gone.bm25(lexical.query_hashes("kids", STOPWORDS), gone.mask(["cold"]), 10)
    assert len(found) == 0


def test_hostile_text_is_analysed_in_linear_time() -> None:
    # an apostrophe after every letter, and a megabyte of one word
    assert len(lexical.words("a'" * 50_000)) == 1
    assert len(lexical.term_bytes("word " * 200_000)) == 4 * 200_000
