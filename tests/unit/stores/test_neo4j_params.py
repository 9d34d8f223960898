"""Parameters go to Neo4j as they are, behind a short ``repr``: the driver spells every
RUN's parameters out for a debug log whether or not the log is on (``session.py``)."""

from __future__ import annotations

from typing import Any

import numpy as np
from neo4j._codec.packstream.v1 import Packer

from graphmem.stores.neo4j.session import _unspelled


class _Buffer:
    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, chunk: bytes) -> None:
        self.data += chunk


def packed(value: Any) -> bytes:
    buffer = _Buffer()
    Packer(buffer).pack(value)  # type: ignore[no-untyped-call]
    return bytes(buffer.data)


def rows(n: int) -> dict[str, Any]:
    vector = np.linspace(-1, 1, 384, dtype=np.float32)
    return {
        "tenant": "t1",
        "limit": 10,
        "rows": [
            {"id": f"m{i}", "embedding": vector.tolist(), "bytes": vector.tobytes()}
            for i in range(n)
        ],
        "embedding": vector.tolist(),
        "vectorBytes": vector.tobytes(),
        "filter": {"a": [1, 2], "b": None},
    }


def test_the_driver_packs_them_exactly_as_the_plain_values() -> None:
    plain = rows(3)
    quiet = _unspelled(plain)
    assert quiet == plain
    assert packed(quiet) == packed(plain)


def test_their_repr_does_not_grow_with_their_content() -> None:
    plain = rows(500)
    quiet = _unspelled(plain)
    assert len(repr(quiet)) < 200 < len(repr(plain)) // 10_000
