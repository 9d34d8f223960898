"""Listing cursors: ours read back, anything else is bad input naming ``after``."""

from __future__ import annotations

import pytest

from graphmem.errors import BadInput
from graphmem.memory.tiers.listing import parse_cursor


@pytest.mark.parametrize(
    "cursor", ["\u00b2:mem_x", "9" * 5000 + ":mem_x", "1:mem_x\n", "99999999999999999999:m", "1:"]
)
def test_cursors_that_are_not_ours_are_bad_input(cursor: str) -> None:
    with pytest.raises(BadInput) as refused:
        parse_cursor(cursor)
    assert refused.value.details["field"] == "after"


def test_a_cursor_reads_back() -> None:
    assert parse_cursor("1700000000000000000:mem_abc") == (1700000000000000000, "mem_abc")
