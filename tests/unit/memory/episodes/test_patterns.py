"""Episode voting and signatures (docs/concepts.md#episodes), and the reflection
patterns, on plain data."""

from __future__ import annotations

from typing import Any

import pytest

from graphmem.errors import BadInput
from graphmem.memory.episodes.patterns import aggregate_votes, compute_signature, find_patterns


def test_similarity_weighted_voting_by_hand() -> None:
    episodes = [
        ({"Qty": "quantity", "Desc": "description"}, 0.9),
        ({"Qty": "amount", "Desc": "description"}, 0.5),
        ({"Qty": "amount", "SKU": "part_number"}, 0.3),
    ]
    votes = {v.key: v for v in aggregate_votes(episodes)}
    # Qty: quantity 0.9 vs amount 0.5 + 0.3 = 0.8 → quantity, 0.9 / 1.7
    assert votes["Qty"].value == "quantity"
    assert votes["Qty"].confidence == pytest.approx(0.9 / 1.7)
    assert votes["Qty"].alternatives == pytest.approx({"quantity": 0.9, "amount": 0.8})
    # Desc: description 0.9 + 0.5 = 1.4, the only value → confidence 1
    assert votes["Desc"].value == "description" and votes["Desc"].confidence == 1.0
    assert votes["Desc"].votes == pytest.approx(1.4)
    assert votes["SKU"].value == "part_number" and votes["SKU"].confidence == 1.0


def test_stale_values_are_filtered_before_the_vote() -> None:
    episodes = [({"Qty": "quantity"}, 0.9), ({"Qty": "amount"}, 0.5), ({"Qty": "amount"}, 0.3)]
    votes = aggregate_votes(episodes, keep=lambda key, value: value != "quantity")
    assert [(v.key, v.value, v.confidence) for v in votes] == [("Qty", "amount", 1.0)]


def test_unrelated_episodes_have_no_say() -> None:
    votes = aggregate_votes([({"Qty": "quantity"}, 0.7), ({"Qty": "amount"}, -0.2)])
    assert [(v.value, v.confidence) for v in votes] == [("quantity", 1.0)]


def test_signature_ignores_order_and_case() -> None:
    assert compute_signature(["Qty", "SKU", "Desc"]) == compute_signature(["desc", "sku", "QTY"])
    assert compute_signature({"a": 1, "b": 2}) == compute_signature(["B", "A"])
    assert compute_signature(["a"]) != compute_signature(["b"])
    with pytest.raises(BadInput):
        compute_signature([])


def test_a_failed_step_then_a_success_gives_a_recovery_and_a_summary() -> None:
    flight = {
        "episode": {
            "id": "ep1",
            "signature": None,
            "success": True,
            "outcome": "flight booked",
            "lessons": ["check availability first"],
        },
        "steps": [
            {
                "order": 0,
                "action": "book flight AF1234",
                "status": "failed",
                "result": "unavailable",
            },
            {"order": 1, "action": "book flight AF5678", "status": "succeeded", "result": "ok"},
        ],
    }
    dinner = {
        "episode": {
            "id": "ep2",
            "signature": None,
            "success": True,
            "outcome": "positive feedback",
            "lessons": [],
        },
        "steps": [
            {
                "order": 0,
                "action": "recommend Le Chat Noir",
                "status": "succeeded",
                "result": "positive feedback",
            }
        ],
    }
    patterns = {p.kind: p for p in find_patterns([flight, dinner])}
    recovery = patterns["recovery"]
    assert recovery.pattern == "after 'book flight AF1234' failed, 'book flight AF5678' succeeded"
    assert recovery.evidence == ["ep1"] and recovery.support == 1
    assert recovery.confidence == 0.5
    summary = patterns["summary"]
    assert "'book flight AF1234' failed and 'book flight AF5678' worked instead" in summary.pattern
    assert "positive feedback" in summary.pattern
    assert summary.evidence == ["ep1", "ep2"]
    assert summary.details["lessons"] == ["check availability first"]
    assert "repeated_failure" not in patterns  # one failure is not a habit


def test_repeated_failure_and_success_rate_per_signature() -> None:
    def episode(eid: str, ok: bool, status: str) -> dict[str, Any]:
        return {
            "episode": {"id": eid, "signature": "sig", "success": ok, "outcome": "x"},
            "steps": [{"order": 0, "action": "Parse dates", "status": status}],
        }

    patterns = find_patterns(
        [
            episode("a", False, "failed"),
            episode("b", False, "failed"),
            episode("c", True, "succeeded"),
        ]
    )
    by_kind = {p.kind: p for p in patterns}
    assert by_kind["repeated_failure"].pattern == "'Parse dates' keeps failing"
    assert by_kind["repeated_failure"].evidence == ["a", "b"]
    assert by_kind["success_rate"].confidence == pytest.approx(1 / 3)
    assert by_kind["success_rate"].evidence == ["a", "b", "c"]
