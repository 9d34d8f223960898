"""Integer literals too long to convert are found in the document, before validation."""

from __future__ import annotations

from graphql import parse

from graphmem.api.graphql.lengths import MAX_INT_DIGITS, long_integer


def test_huge_integer_literals_are_found_before_validation() -> None:
    huge = "9" * 5000
    assert long_integer(parse(f'{{ conversation(sessionId: "s", last: {huge}) {{ role }} }}')) == (
        "last"
    )
    assert (
        long_integer(
            parse(f"mutation {{ addMemory(input: {{metadata: {{a: [{huge}]}}}}) {{ id }} }}")
        )
        == "a"
    )
    assert long_integer(parse(f'query($n: Int = -{huge}) {{ hot(sessionId: "s") {{ id }} }}')) == (
        "a default value"
    )
    fine = "9" * MAX_INT_DIGITS
    assert (
        long_integer(parse(f'{{ conversation(sessionId: "s", last: {fine}) {{ role }} }}')) is None
    )
