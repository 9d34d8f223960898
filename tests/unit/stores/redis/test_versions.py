"""A scope's change log, read only when it reaches back unbroken."""

from __future__ import annotations

from graphmem.stores.redis.versions import _changed_since


def test_the_change_log_is_read_only_when_it_reaches_back_unbroken() -> None:
    log = ["1>2|a", "2>5|b,c", "5>9|d"]
    assert _changed_since(log, "2", "9") == frozenset({"b", "c", "d"})
    assert _changed_since(log, "5", "9") == frozenset({"d"})
    assert _changed_since(log, "0", "9") is None  # older than the log remembers
    assert _changed_since(["2>5|*", "5>9|d"], "2", "9") is None  # a change of everything
    assert _changed_since(["2>5|b", ">9|d"], "2", "9") is None  # an expired key between
