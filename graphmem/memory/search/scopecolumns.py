"""A scope's rows as columns (``scopeview.py``): vectors, sentence vectors and stem
hashes decoded from the byte strings the graph stores into numpy arrays, tiers and types
as small codes, and the columns of few distinct values (sessions, users, type names,
speakers) as integers into a list of those values, so that a view holds no Python object
per row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from graphmem.domain.models import MemoryType, Tier
from graphmem.stores.models import MemoryRows

F32 = npt.NDArray[np.float32]
F16 = npt.NDArray[np.float16]
I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]
U32 = npt.NDArray[np.uint32]
Mask = npt.NDArray[np.bool_]

TIER_CODES = {t.value: n for n, t in enumerate(Tier)}
TYPE_CODES = {t.value: n for n, t in enumerate(MemoryType)}
UNKNOWN = -1  # a type or tier written by something newer than this process


def decode(rows: MemoryRows, dimension: int) -> tuple[F32, Mask, F16, I64]:
    """Rows' vectors as arrays: (own vectors, embedded?, sentence vectors, sentences per
    memory). A memory not embedded yet has a zero vector and no sentences."""
    n = len(rows.ids)
    size = 4 * dimension
    has = [i for i, raw in enumerate(rows.vectors) if raw is not None and len(raw) == size]
    vectors = np.zeros((n, dimension), dtype=np.float32)
    embedded = np.zeros(n, dtype=np.bool_)
    if has:
        # one join and one frombuffer, not one per row
        joined = b"".join(rows.vectors[i] or b"" for i in has)
        vectors[has] = np.frombuffer(joined, dtype="<f4").reshape(-1, dimension)
        embedded[has] = True
    counts = np.zeros(n, dtype=np.int64)
    blocks: list[bytes] = []
    for i, raw in enumerate(rows.sentences):
        if raw is not None and embedded[i] and len(raw) % (2 * dimension) == 0:
            counts[i] = len(raw) // (2 * dimension)
            blocks.append(raw)
    sentences = np.frombuffer(b"".join(blocks), dtype="<f2").reshape(-1, dimension)
    return vectors, embedded, sentences, counts


def decode_terms(rows: MemoryRows) -> tuple[U32, I64, Mask]:
    """Rows' stem hashes (``enrich/lexical.py``) as one array in row order, each row's
    count of them (its length, for BM25), and which rows had them (a row written by an
    older version has none until ``Memory.backfill_terms`` analyses it)."""
    n = len(rows.ids)
    if len(rows.terms) != n:
        return np.zeros(0, dtype=np.uint32), np.zeros(n, dtype=np.int64), np.zeros(n, np.bool_)
    counts = np.fromiter(
        (0 if t is None else len(t) // 4 for t in rows.terms), dtype=np.int64, count=n
    )
    joined = b"".join(t[: 4 * (len(t) // 4)] for t in rows.terms if t is not None)
    terms = np.frombuffer(joined, dtype="<u4").astype(np.uint32)
    analysed = np.fromiter((t is not None for t in rows.terms), dtype=np.bool_, count=n)
    return terms, counts, analysed


class Codes:
    """A column of few distinct values (sessions, users, type names) as small integers
    into one list of those values: four bytes a row, not a Python object a row."""

    def __init__(self, names: list[Any], codes: I32) -> None:
        self.names, self.codes = names, codes
        self.lookup = {name: n for n, name in enumerate(names)}

    @classmethod
    def of(cls, values: Sequence[Any], names: Sequence[Any] = ()) -> Codes:
        table: dict[Any, int] = {name: n for n, name in enumerate(names)}
        codes = np.fromiter(
            (table.setdefault(v, len(table)) for v in values), dtype=np.int32, count=len(values)
        )
        return cls(list(table), codes)

    def __getitem__(self, row: int) -> Any:
        return self.names[self.codes[row]]

    def rows_of(self, value: Any) -> Mask:
        code = self.lookup.get(value)
        if code is None:
            return np.zeros(len(self.codes), dtype=np.bool_)
        found: Mask = self.codes == code
        return found

    def merged(self, keep: I64, values: Sequence[Any]) -> Codes:
        """The kept rows' codes followed by ``values``' (new values join the names)."""
        fresh = Codes.of(values, self.names)
        return Codes(fresh.names, np.concatenate((self.codes[keep], fresh.codes)))

    @property
    def nbytes(self) -> int:
        return self.codes.nbytes + 200 * len(self.names)


def packed_ids(ids: Sequence[str]) -> npt.NDArray[np.bytes_]:
    return np.array([i.encode() for i in ids], dtype=np.bytes_) if ids else np.zeros(0, "S1")
