"""MCP reads times as GraphQL's DateTime does: a malformed value is refused whole."""

from __future__ import annotations

import pytest

from graphmem.api import mcp
from graphmem.errors import BadInput

PARSES = "2025-01-01T00:00:00." + "1" * 44  # 64 characters Python reads


def test_a_time_is_refused_whole_not_cut_to_what_parses() -> None:
    assert mcp._moment({"asOf": PARSES}).as_of is not None
    with pytest.raises(BadInput) as refused:
        mcp._moment({"asOf": PARSES + "; DROP"})
    assert refused.value.details.get("field") == "asOf"
