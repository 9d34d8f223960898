"""Prune selection on plain rows: by age, by count and by size, per session."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from graphmem.memory.tiers.retention import PrunePolicy, select

NOW = datetime(2026, 1, 31, tzinfo=UTC)


def row(i: str, session: str, days_old: int, size: int = 10) -> dict[str, Any]:
    return {
        "id": i,
        "sessionId": session,
        "createdAt": NOW - timedelta(days=days_old),
        "seq": 100 - days_old,
        "bytes": size,
    }


ROWS = [
    row("a1", "a", 30),
    row("a2", "a", 10),
    row("a3", "a", 1),
    row("b1", "b", 40, 500),
    row("b2", "b", 2, 300),
]


def test_by_age() -> None:
    policy = PrunePolicy(older_than_seconds=20 * 86400)
    assert select(ROWS, policy, NOW) == ["b1", "a1"]  # oldest first


def test_by_count_keeps_the_newest_per_session() -> None:
    assert select(ROWS, PrunePolicy(keep_newest=1), NOW) == ["b1", "a1", "a2"]
    assert select(ROWS, PrunePolicy(keep_newest=0), NOW) == ["b1", "a1", "a2", "b2", "a3"]


def test_by_size_counts_newest_first() -> None:
    # session b: b2 (300) fits in 400, b1 (500 more) does not; session a: 30 bytes fits
    assert select(ROWS, PrunePolicy(max_bytes_per_session=400), NOW) == ["b1"]


def test_rules_combine_as_a_union() -> None:
    policy = PrunePolicy(older_than_seconds=35 * 86400, keep_newest=2)
    assert select(ROWS, policy, NOW) == ["b1", "a1"]


def test_a_policy_needs_a_rule_and_graph_tiers() -> None:
    with pytest.raises(ValueError, match="at least one rule"):
        PrunePolicy()
    with pytest.raises(ValueError, match="hot tier"):
        PrunePolicy(tiers=["hot"], keep_newest=1)
