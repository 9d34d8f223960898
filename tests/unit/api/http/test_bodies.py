"""Request bodies decoded as JSON: refusals in plain words, without Python's internals."""

from __future__ import annotations

import pytest

from graphmem.api.http.bodies import BadBody, decode


def test_huge_integers_in_a_body_get_a_message_without_python_internals() -> None:
    with pytest.raises(BadBody) as refused:
        decode(b'{"query": "{ x }", "variables": {"n": ' + b"9" * 5000 + b"}}")
    assert "sys." not in str(refused.value) and "set_int_max_str_digits" not in str(refused.value)
    assert "integer" in str(refused.value)
    with pytest.raises(BadBody, match="NaN is not JSON"):
        decode(b'{"query": NaN}')
