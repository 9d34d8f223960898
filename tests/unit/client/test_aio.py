"""The async client's change feed raises the client's own errors for messages not shaped
as graphql-transport-ws's."""

from __future__ import annotations

from typing import Any

import pytest

from graphmem.client import BadInput, GraphmemError, Internal
from graphmem.client.aio import _event, _message


@pytest.mark.parametrize(
    "raw", ["not json", "[1]", '"x"', "[" * 100_000], ids=["text", "list", "string", "deep"]
)
def test_change_feed_messages_not_json_objects_are_internal(raw: str) -> None:
    with pytest.raises(Internal):
        _message(raw)


@pytest.mark.parametrize(
    ("payload", "error"),
    [
        (None, Internal),
        ({"data": None}, Internal),
        ({"data": {"memoryEvents": {"kind": "ADDED"}}}, Internal),
        ({"errors": "boom"}, Internal),
        ({"errors": [{"message": "m", "extensions": {"code": "BAD_INPUT"}}]}, BadInput),
    ],
)
def test_change_feed_events_of_the_wrong_shape_raise_typed_errors(
    payload: Any, error: type[GraphmemError]
) -> None:
    with pytest.raises(error):
        _event(payload)
