"""The lexical analysis BM25 runs on: words, stems, stopwords and term hashes, in linear
time on hostile text. (The scores a scope computes from them: test_scopeview.py.)"""

from __future__ import annotations

import numpy as np

from graphmem.enrich import lexical
from graphmem.memory.search.querytext import STOPWORDS


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


def test_hostile_text_is_analysed_in_linear_time() -> None:
    # an apostrophe after every letter, and a megabyte of one word
    assert len(lexical.words("a'" * 50_000)) == 1
    assert len(lexical.term_bytes("word " * 200_000)) == 4 * 200_000
