"""BM25 of store items Lucene does not hold yet (memory/kinds/items/textscore.py): on the
scale of Lucene's hits, the best hit 1."""

from __future__ import annotations

from graphmem.memory.kinds.items.textscore import bm25, unindexed_scores


def test_more_occurrences_and_shorter_texts_score_higher() -> None:
    scores = bm25(["invoice"], ["invoice", "invoice invoice", "the invoice of a long day out"])
    assert scores[1] > scores[0] > scores[2] > 0


def test_words_are_analysed_as_lucene_english_analyzer_does() -> None:
    # stemmed, lower-cased, possessive dropped: "Invoices'" and "invoice's" meet "invoice"
    assert min(bm25(["invoices"], ["Invoice's due", "an INVOICE"])) > 0
    assert bm25(["budget"], ["an invoice"]) == [0.0]


def test_an_unindexed_text_is_set_against_the_best_lucene_hit() -> None:
    hits = [(2.0, "electricity invoice overdue"), (1.0, "an invoice")]
    same, weaker, none = unindexed_scores(
        ["electricity", "overdue"], hits, ["electricity invoice overdue", "an overdue bill", "tea"]
    )
    assert same == 1.0 and 0 < weaker < 1 and none == 0.0


def test_without_lucene_hits_the_best_unindexed_text_is_one() -> None:
    assert unindexed_scores(["tea"], [], ["tea tea", "green tea with a biscuit"])[0] == 1.0
    assert unindexed_scores(["tea"], [], []) == []
