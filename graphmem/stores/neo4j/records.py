"""Graph rows read: the conversions every reader of a Neo4j result goes through, and the
parsers of memory rows.

Every reader of a Neo4j result goes through these parsers, so a renamed property or a new
temporal type is handled once. They take the row (a ``neo4j.Record`` or the map a query
projects) and read the keys the named statements of ``cypher/`` return. The rows the
writes take are built in ``rows.py``; the rows of entities, episodes, personas and
records are read in ``records_kinds.py``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar

from graphmem.domain.models import MemoryItem, MemoryType, Tier, content_hash, to_datetime
from graphmem.stores.models import RETRACTED_EVER, MemoryRows, Removed
from graphmem.stores.neo4j.rows import pack_vector

Row = Mapping[str, Any]
R = TypeVar("R")
T = TypeVar("T")
log = logging.getLogger("graphmem.stores")


def when(value: Any) -> datetime | None:
    return None if value is None else to_datetime(value)


def native(value: Any) -> Any:
    """A driver value as plain Python: temporal values become datetimes, the rest is kept."""
    return to_datetime(value) if hasattr(value, "to_native") else value


def native_row(row: Row) -> dict[str, Any]:
    return {k: native(v) for k, v in dict(row).items()}


def json_property(text: Any) -> Any:
    """A map stored as JSON text (a memory's metadata, an episode's metrics), decoded."""
    # Neo4j properties cannot hold maps; these round-trip as JSON text. Text that no
    # longer decodes (written by hand, or by an older version) reads as empty rather
    # than failing every read of its session.
    try:
        return json.loads(text or "{}")
    except (ValueError, RecursionError):
        log.warning("unreadable JSON property ignored: %.80r", text)
        return {}


#: what a row written by hand, by an older version or half-migrated raises when parsed
_UNREADABLE = (KeyError, ValueError, TypeError, RecursionError)


def parsed(rows: Iterable[R], parse: Callable[[R], T]) -> list[T]:
    """``parse`` applied to each row; a row that does not parse is logged and skipped, so
    one bad node cannot make a whole session or tenant unreadable."""
    out: list[T] = []
    for row in rows:
        try:
            out.append(parse(row))
        except _UNREADABLE as exc:
            log.warning("skipped an unreadable row: %s", exc)
    return out


class ParsedOnRead(Mapping[str, T]):
    """Rows by their ``id``, each parsed the first time it is asked for: a search reads
    about sixty memories as items beside their neighbours and keeps ten. A row that
    does not parse is logged and reads as absent, as ``parsed`` skips it."""

    def __init__(self, rows: Iterable[Row], parse: Callable[[Row], T]) -> None:
        self._rows = {row["id"]: row for row in rows}
        self._parse = parse
        self._done: dict[str, T] = {}

    def __getitem__(self, key: str) -> T:
        found = self._done.get(key)
        if found is None:
            row = self._rows[key]
            try:
                found = self._parse(row)
            except _UNREADABLE as exc:
                log.warning("skipped an unreadable row: %s", exc)
                raise KeyError(key) from exc
            self._done[key] = found
        return found

    def __contains__(self, key: object) -> bool:
        return key in self._rows

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)


# --- memories ---------------------------------------------------------------------------
def row_ids(rows: Iterable[Row]) -> list[str]:
    """The ``id`` of each row (what a write returns: the memories it wrote)."""
    return [str(r["id"]) for r in rows]


def memory_rows(record: Row) -> MemoryRows:
    """A row of lists (``memory/scope_rows_*``, ``text_hits``, ``vector_hits_*``,
    ``neighbours``, ``rows_by_ids``, ``linked``) as columns. Each memory's place comes as
    one tab-separated ``meta`` text (id, session, user, seq, type, tier, when it happened
    in epoch seconds, speaker; ids hold no tabs, speakers are folded to single spaces):
    the driver decodes values one by one, and eight per memory cost more than the rest."""
    keys = record.keys()
    record = _without_vanished(record)
    meta = [m.split("\t") for m in record["meta"]]
    n = len(meta)
    vectors: list[bytes | None] = [None] * n
    if "vectors" in keys and len(record["vectors"]) == n:
        # a memory embedded before vectorBytes existed has only the list of floats
        listed = {i: e for i, e in record["embeddings"]} if "embeddings" in keys else {}
        vectors = [
            bytes(v) if v is not None else pack_vector(listed.get(m[0]))
            for v, m in zip(record["vectors"], meta, strict=True)
        ]
    sentences: list[bytes | None] = [None] * n
    if "sentences" in keys and len(record["sentences"]) == n:
        sentences = [None if s is None else bytes(s) for s in record["sentences"]]
    return MemoryRows(
        ids=[m[0] for m in meta],
        sessions=[m[1] for m in meta],
        users=[m[2] or None for m in meta],
        seqs=[int(m[3]) for m in meta],
        types=[m[4] for m in meta],
        tiers=[m[5] for m in meta],
        vectors=vectors,
        sentences=sentences,
        scores=[float(s) for s in record["scores"]] if "scores" in keys else [],
        anchors=list(record["anchors"]) if "anchors" in keys else [],
        terms=[None if t is None else bytes(t) for t in record["terms"]] if "terms" in keys else [],
        created=[int(m[6]) if len(m) > 6 else 0 for m in meta],
        speakers=[m[7] if len(m) > 7 else "" for m in meta],
        **(_clocks(meta, record["spans"]) if "spans" in keys else {}),
    )


#: the row's lists that hold something else than one entry per memory
_NOT_PER_MEMORY = ("n", "spans", "embeddings")


def _without_vanished(record: Row) -> Row:
    """The row without the memories a concurrent erasure deleted while it was read: their
    properties read as null (``meta`` among them), in every list that has one entry per
    memory."""
    metas = record["meta"]
    if all(m is not None for m in metas):
        return record
    keep = [i for i, m in enumerate(metas) if m is not None]
    out = dict(record.items())
    for key, value in out.items():
        if key not in _NOT_PER_MEMORY and isinstance(value, list) and len(value) == len(metas):
            out[key] = [value[i] for i in keep]
    return out


def _clocks(meta: list[list[str]], spans: list[Any]) -> dict[str, Any]:
    """The clocks a scope's rows carry after the eight fields of ``meta`` (record time,
    valid time, retraction: microseconds, "" for none, "x" for a retraction that is no
    time), and the past retraction spans of the few memories that have them."""

    def at(text: str) -> int | None:
        return int(text) if text else None

    listed = {i: tuple(zip(start, end, strict=False)) for i, start, end in spans}
    return {
        "recorded": [at(m[8]) for m in meta],
        "occurred": [at(m[9]) for m in meta],
        "retracted": [RETRACTED_EVER if m[10] == "x" else at(m[10]) for m in meta],
        "spans": [listed.get(m[0], ()) for m in meta],
    }


def mention_counts(rows: Iterable[Row]) -> dict[str, int]:
    """``entity/memories_mentioning``: how many of the entities asked for each memory
    mentions."""
    return {r["id"]: int(r["matched"]) for r in rows}


def removed(rows: Sequence[Row]) -> Removed:
    """``memory/delete_many``: one row, or none when nothing matched."""
    if not rows:
        return Removed()
    row = rows[0]
    return Removed(
        removed=int(row["removed"]),
        keys=list(row["keys"]),
        located=[(str(i), s, u) for i, s, u in row["located"]],
    )


def index_states(rows: Iterable[Row]) -> dict[str, dict[str, Any]]:
    """``admin/index_state``: each index's row by its name."""
    return {r["name"]: dict(r) for r in rows}


def memory_item(tenant: str, props: Row) -> MemoryItem:
    return MemoryItem(
        id=props["id"],
        tenant=tenant,
        session_id=props["sessionId"],
        user_id=props.get("userId"),
        content=props["content"],
        type=MemoryType(props["type"]),
        tier=Tier(props["tier"]),
        access_count=props.get("accessCount", 0),
        last_accessed_at=to_datetime(props["lastAccessedAt"]),
        created_at=to_datetime(props["createdAt"]),
        relevance_score=props.get("relevanceScore", 0.5),
        token_count=props.get("tokenCount", 0),
        content_hash=props.get("contentHash") or content_hash(props["content"]),
        metadata=json_property(props.get("metadata")),
        seq=props.get("seq") or 0,
        recorded_at=when(props.get("recordedAt")),
        retracted_at=when(props.get("retractedAt")),
        retract_reason=props.get("retractReason"),
    )
