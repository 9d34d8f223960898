"""Graph rows written and parsed, in one place.

Every reader of a Neo4j result goes through these parsers, so a renamed property or a new
temporal type is handled once. They take the row (a ``neo4j.Record`` or the map a query
projects) and read the keys the named statements of ``cypher/`` return. The rows the
writes take (``memory_row``, ``vector_row``) are built here too, so that a property is
named in one module whichever way it goes.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

import numpy as np

from graphmem.domain.models import (
    MemoryItem,
    MemoryType,
    Tier,
    content_hash,
    scope_tokens,
    to_datetime,
)
from graphmem.settings import PersonaConfig
from graphmem.stores.models import (
    AliasRule,
    CoOccurrence,
    Entity,
    EntityDetail,
    EntityMention,
    EntityRelation,
    Episode,
    EpisodeSteps,
    GraphMemory,
    MemoryRows,
    MemoryVectors,
    MergeResult,
    OwnedTask,
    Reflection,
    Removed,
    ScoredEpisode,
    Step,
    StoredRecord,
    Task,
    TaskDetail,
    TextAnalysis,
    Transfer,
    TransferOutcome,
    UserEntity,
)

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


def _json(text: Any) -> Any:
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


# --- memories written ---------------------------------------------------------------------
def pack_vector(vector: Sequence[float] | None) -> bytes | None:
    """A memory's own vector as a graph property beside the vector index's copy: float32
    little-endian bytes (``vectorBytes``), which search reads into memory a hundred times
    faster than the list of floats the index needs."""
    if vector is None:
        return None
    return np.asarray(vector, dtype="<f4").tobytes()


def analysis_row(analysis: TextAnalysis) -> dict[str, Any]:
    """A memory's text analysis as the properties that hold it (``termVersion`` versions
    both: ``Memory.backfill_terms``)."""
    return {"termBytes": analysis.terms, "speaker": analysis.speaker}


def memory_row(memory: GraphMemory) -> dict[str, Any]:
    """The parameter map one ``UNWIND`` row of the upsert statements expects."""
    item, embedding = memory.item, memory.embedding
    return {
        "id": item.id,
        "sessionId": item.session_id,
        "userId": item.user_id,
        "content": item.content,
        "type": item.type.value,
        "tier": item.tier.value,
        "accessCount": item.access_count,
        "lastAccessedAt": item.last_accessed_at,
        "createdAt": item.created_at,
        "relevanceScore": item.relevance_score,
        "tokenCount": item.token_count,
        "contentHash": item.content_hash,
        # Neo4j properties cannot hold maps; metadata round-trips as JSON text.
        "metadata": json.dumps(item.metadata, separators=(",", ":"), sort_keys=True),
        "embedding": embedding,
        "vectorBytes": pack_vector(embedding),
        # float16 vectors of each sentence (enrich/sentences.py); null for one sentence
        "sentenceVectors": memory.sentences,
        "seq": item.seq,
        # analyzer tokens for tenant, session and user: fulltext queries filter in Lucene
        "scopeToken": scope_tokens(item.tenant, item.session_id, item.user_id),
        **analysis_row(memory.analysis),
        "termVersion": memory.analysis.version,
    }


def vector_row(vectors: MemoryVectors) -> dict[str, Any]:
    """A memory's vectors as the statements that set them take one row
    (memory/set_vectors, reembed/memory_next)."""
    return {
        "id": vectors.id,
        "embedding": vectors.embedding,
        "vectorBytes": pack_vector(vectors.embedding),
        "sentenceVectors": vectors.sentences,
    }


# --- memories read ----------------------------------------------------------------------
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
    )


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
        metadata=_json(props.get("metadata")),
        seq=props.get("seq") or 0,
    )


# --- entities ---------------------------------------------------------------------------
def entity(e: Row) -> Entity:
    return Entity(
        key=e["key"],
        name=e["name"],
        type=e["type"],
        aliases=list(e.get("aliases") or []),
        mention_count=int(e.get("mentionCount") or 0),
        first_seen=when(e.get("firstSeen")),
        last_seen=when(e.get("lastSeen")),
        merged_from=list(e.get("mergedFrom") or []),
    )


def _flat(groups: Iterable[Iterable[Row]]) -> list[Row]:
    """``entity/get`` returns one list per merged member; callers see one list."""
    return [x for group in groups for x in group]


def _relation(r: Row) -> EntityRelation:
    return EntityRelation(
        type=r["type"],
        direction=r["direction"],
        other=r["other"],
        other_name=r["otherName"],
        valid_from=when(r.get("validFrom")),
        valid_until=when(r.get("validUntil")),
        sources=list(r.get("sources") or []),
        closed_by=r.get("closedBy"),
    )


def entity_detail(row: Row) -> EntityDetail:
    return EntityDetail(
        entity=entity(row["entity"]),
        mentions=[
            EntityMention(
                memory_id=m["memoryId"],
                content=m["content"],
                surface=m["surface"],
                via=m.get("via") or "exact",
                created_at=when(m.get("createdAt")),
                user_id=m.get("userId"),
            )
            for m in _flat(row["mentions"])
        ],
        outgoing=[_relation(r) for r in _flat(row["outgoing"])],
        incoming=[_relation(r) for r in _flat(row["incoming"])],
        cooccurring=[
            CoOccurrence(other=c["other"], weight=int(c["weight"] or 0))
            for c in _flat(row["cooccurring"])
        ],
    )


def user_entity(row: Row) -> UserEntity:
    return UserEntity(
        entity=entity(row["entity"]),
        count=int(row["count"]),
        first_seen=when(row["firstSeen"]),
        last_seen=when(row["lastSeen"]),
    )


def alias_rule(row: Row) -> AliasRule:
    return AliasRule(alias=row["alias"], canonical=row["canonical"], kind=row["kind"])


def merge_result(row: Row, merge_id: str | None = None) -> MergeResult:
    """``entity/undo_merge`` does not return the id it was given; the caller passes it."""
    return MergeResult(
        merge_id=merge_id or row["mergeId"], source=row["source"], target=row["target"]
    )


# --- tasks and episodes -----------------------------------------------------------------
def task(t: Row) -> Task:
    return Task(
        id=t["id"],
        description=t["description"],
        status=t["status"],
        owner=t.get("owner"),
        generation=int(t.get("generation") or 1),
        created_at=when(t.get("createdAt")),
        completed_at=when(t.get("completedAt")),
    )


def step(s: Row) -> Step:
    return Step(
        id=s["id"],
        action=s["action"],
        result=s.get("result"),
        status=s["status"],
        order=int(s["order"]),
        started_at=when(s.get("startedAt")),
        ended_at=when(s.get("endedAt")),
        owner=s.get("owner"),
        generation=s.get("generation"),
    )


def _steps(rows: Iterable[Row]) -> list[Step]:
    return sorted((step(s) for s in rows), key=lambda s: s.order)


def task_detail(row: Row) -> TaskDetail:
    return TaskDetail(
        task=task(row["task"]), steps=_steps(row["steps"]), episodes=list(row["episodes"])
    )


def owned_task(row: Row) -> OwnedTask:
    return OwnedTask(
        task=task(row["task"]),
        steps=_steps(row["steps"]),
        transfers=sorted((transfer(x) for x in row["transfers"]), key=lambda x: x.to_generation),
        episodes=sorted((episode(e) for e in row["episodes"]), key=_recorded),
    )


def _recorded(e: Episode) -> tuple[datetime, str]:
    return (e.created_at or datetime.min.replace(tzinfo=UTC), e.id)


def transfer(x: Row) -> Transfer:
    return Transfer(
        from_owner=x.get("fromOwner"),
        to_owner=x["toOwner"],
        from_generation=int(x["fromGeneration"]),
        to_generation=int(x["toGeneration"]),
        reason=x.get("reason") or None,
        at=when(x.get("at")),
    )


def transfer_outcome(row: Row) -> TransferOutcome:
    return TransferOutcome(
        moved=bool(row["moved"]), owner=row["owner"], generation=int(row["generation"])
    )


def episode(e: Row) -> Episode:
    return Episode(
        id=e["id"],
        task_id=e["taskId"],
        description=e.get("description"),
        outcome=e["outcome"],
        success=bool(e["success"]),
        signature=e.get("signature"),
        lessons=list(e.get("lessons") or []),
        metrics=_json(e.get("metrics")),
        mappings=_json(e.get("mappings")),
        created_at=when(e.get("createdAt")),
    )


def scored_episode(row: Row) -> ScoredEpisode:
    return ScoredEpisode(
        episode=episode(row["episode"]),
        similarity=float(row["similarity"]),
        cosine=float(row["cosine"]),
        signature_match=bool(row["signatureMatch"]),
    )


def episode_steps(row: Row) -> EpisodeSteps:
    return EpisodeSteps(episode=episode(row["episode"]), steps=_steps(row["steps"]))


def reflection(r: Row) -> Reflection:
    return Reflection(
        id=r["id"],
        kind=r["kind"],
        pattern=r["pattern"],
        support=int(r["support"]),
        confidence=float(r["confidence"]),
        signature=r.get("signature"),
        details=_json(r.get("details")),
        evidence=list(r.get("evidence") or []),
    )


# --- personas and records ---------------------------------------------------------------
def persona(p: Row) -> PersonaConfig:
    return PersonaConfig(
        role=p["role"],
        tone=p.get("tone") or "",
        expertise=list(p.get("expertise") or []),
        constraints=list(p.get("constraints") or []),
    )


def stored_record(row: Row) -> StoredRecord:
    return StoredRecord(id=row["id"], data=row["data"], created_at=when(row.get("createdAt")))
