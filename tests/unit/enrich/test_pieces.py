"""What NER reads a text in: runs of symbols and overlong words neutralised in place, and
long texts cut into pieces after sentences."""

from __future__ import annotations

import re

from graphmem.enrich.pieces import CHUNK_CHARS, MAX_SYMBOL_RUN, MAX_WORD, neutralise, spans
from tests.support.texts import conversation


def test_neutralising_keeps_offsets_and_prose_and_bounds_every_run() -> None:
    prose = conversation(5000)
    assert neutralise(prose) == prose
    for text in [
        "(" * 500,
        "\U0001f600" * 500,
        "'s" * 500,
        "a-" * 500,
        "x" * 500,
        "Zalgo\u0301" * 99,
    ]:
        out = neutralise(text)
        assert len(out) == len(text)
        assert not re.search(rf"[^\w\s]{{{MAX_SYMBOL_RUN + 1},}}", out)
        assert not re.search(rf"\S{{{MAX_WORD + 1},}}", out)
    assert neutralise("Wow!!!!!!! Alice") == "Wow!!!!    Alice"


def test_a_long_text_is_read_in_pieces_cut_after_sentences() -> None:
    text = conversation(20000)
    cuts = spans(text)
    assert len(cuts) >= 10
    assert all(end - start <= CHUNK_CHARS for start, end in cuts)
    # nothing but the whitespace between pieces is left out, and each piece ends a sentence
    covered = sum(b - a for a, b in cuts)
    assert covered == len(text) - (len(cuts) - 1)
    assert all(text[b - 1] in ".!?" for _, b in cuts)
