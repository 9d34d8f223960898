"""Agents SDK items as memories: the text search ranks, the metadata kept, the limits
checked before anything is sent, the order read back, session ids made graphmem ids."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from graphmem.client import MemoryItem
from graphmem.integrations.openai_agents.items import (
    ItemError,
    check_user,
    in_order,
    item_of,
    memory_of,
    session_of,
    text_of,
)


@pytest.mark.parametrize(
    ("item", "text"),
    [
        ({"role": "user", "content": "Hello"}, "Hello"),
        (
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "a"},
                    {"type": "input_image", "image_url": "u"},
                ],
            },
            "a",
        ),
        (
            {
                "role": "assistant",
                "content": [
                    {"type": "output_text", "text": "b", "annotations": []},
                    {"type": "refusal", "refusal": "no"},
                ],
            },
            "b\nno",
        ),
        ({"type": "function_call", "name": "f", "arguments": "{}", "call_id": "c"}, "f\n{}"),
        ({"type": "function_call_output", "call_id": "c", "output": "42"}, "42"),
        (
            {
                "type": "function_call_output",
                "call_id": "c",
                "output": [{"type": "input_text", "text": "x"}],
            },
            "x",
        ),
        ({"type": "reasoning", "summary": [{"type": "summary_text", "text": "think"}]}, "think"),
        ({"type": "item_reference", "id": "msg_1"}, "item_reference"),
        ({"role": "user", "content": "   "}, "user"),
        ({}, "item"),
    ],
)
def test_the_text_of_items(item: dict[str, Any], text: str) -> None:
    assert text_of(item) == text


def test_an_item_is_kept_whole_in_metadata() -> None:
    item = {"role": "user", "content": "hi", "extra": {"nested": [1, 2.5, None, True]}}
    text, metadata = memory_of(item, 3, "b1", max_text=100, max_metadata=1000, index=0)
    assert text == "hi"
    assert metadata == {"oaItem": item, "oaSeq": 3, "oaBatch": "b1"}


@pytest.mark.parametrize(
    ("item", "why"),
    [
        ({"role": "user", "content": "x" * 2000}, "item 4: 20.. bytes of JSON; .* at most 1000"),
        ("text", "item 4: must be a JSON object"),
        (["a"], "item 4: must be a JSON object"),
        ({"content": float("nan")}, "item 4: not JSON"),
        ({"content": object()}, "item 4: not JSON"),
    ],
)
def test_items_graphmem_would_refuse(item: Any, why: str) -> None:
    with pytest.raises(ItemError, match=why):
        memory_of(item, 0, "b", max_text=100_000, max_metadata=1000, index=4)


def test_text_over_the_content_limit() -> None:
    with pytest.raises(ItemError, match="its text is 50 characters; graphmem keeps at most 10"):
        memory_of({"content": "y" * 50}, 0, "b", max_text=10, max_metadata=10_000, index=0)


def _memory(n: int, batch: str, seq: int) -> MemoryItem:
    return MemoryItem(
        f"mem_{n}",
        "oa.s",
        None,
        "c",
        "MESSAGE",
        "HOT",
        0,
        1,
        1.0,
        datetime(2026, 1, 1, tzinfo=UTC),
        {"oaItem": {"n": n}, "oaSeq": seq, "oaBatch": batch},
    )


def test_order_keeps_each_call_together_in_its_own_order() -> None:
    # graphmem's order interleaved two calls; each call's items come back together
    listed = [
        _memory(1, "a", 0),
        _memory(2, "b", 0),
        _memory(3, "a", 2),
        _memory(4, "a", 1),
        _memory(5, "b", 1),
    ]
    assert [item_of(m) for m in in_order(listed)] == [{"n": n} for n in (1, 4, 3, 2, 5)]


@pytest.mark.parametrize(
    ("session", "expected"),
    [
        ("chat-1", "oa.chat-1"),
        ("a b", "oa.a_20b"),
        ("user:42/ü", "oa.user_3A42_2F_C3_BC"),
        ("x.y", "oa.x_2Ey"),
    ],
)
def test_session_ids_become_graphmem_ids(session: str, expected: str) -> None:
    assert session_of(session) == expected


@pytest.mark.parametrize("session", ["", "x" * 126, "é" * 30])
def test_session_ids_too_long_or_empty_are_refused(session: str) -> None:
    with pytest.raises(ValueError, match="session_id"):
        session_of(session)


@pytest.mark.parametrize("user", ["", "a b", "x" * 129, "ü"])
def test_user_ids_outside_graphmem_ids_are_refused(user: str) -> None:
    with pytest.raises(ValueError, match="user_id"):
        check_user(user)
