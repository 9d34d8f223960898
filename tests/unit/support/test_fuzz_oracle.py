"""The fuzz oracle (tests/support/fuzzgen.py) flags internals in an answer, but not the
client's own input quoted back to it."""

from __future__ import annotations

from tests.support.fuzzgen import leaks

QUOTED = (
    "Variable '$a0' has invalid value: Expected value of type 'TaskImportInput' not to "
    "include unknown field 'bogus', found: {'status': 'failed-ish', 'generation': 1, "
    "'steps': [], 'transfers': []}."
)


def test_input_quoted_back_is_not_a_leak() -> None:
    sent = {"status": "failed-ish", "generation": 1, "steps": [], "transfers": []}
    assert leaks(QUOTED) == ["failed query"]  # read alone, it looks like one
    assert leaks(QUOTED, sent) == []


def test_internals_are_flagged_whatever_was_sent() -> None:
    sent = {"content": "hello"}
    assert leaks('Traceback (most recent call last): File "x.py"', sent) == [
        "traceback",
        "file path",
    ]
    assert "failed query" in leaks("memory/get_by_ids failed: hello", sent)
