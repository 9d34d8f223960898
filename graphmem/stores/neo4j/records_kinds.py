"""Graph rows of the memory kinds beside the tiers, read as typed models: entities, tasks,
steps, episodes and reflections, personas and structured records, and the knowledge
graph of the MCP memory-server tools (``cypher/kg``).

These are what ``entities.py``, ``episodes.py`` and ``profiles.py`` return (the protocols
of ``stores/protocols_kinds.py``); they read the keys the named statements of
``cypher/entity``, ``cypher/episode``, ``cypher/persona`` and ``cypher/record`` return,
with the conversions and the JSON properties of ``records.py``.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from graphmem.domain.knowledge import KGEntity, KGRelation
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
    MergeResult,
    OwnedTask,
    Reflection,
    ScoredEpisode,
    Step,
    StoredRecord,
    Task,
    TaskDetail,
    Transfer,
    TransferOutcome,
    UserEntity,
)
from graphmem.stores.neo4j.records import Row, json_property, when


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
        recorded_at=when(r.get("recordedAt")),
        closed_at=when(r.get("closedAt")),
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
        metrics=json_property(e.get("metrics")),
        mappings=json_property(e.get("mappings")),
        created_at=when(e.get("createdAt")),
        recorded_at=when(e.get("recordedAt") or e.get("createdAt")),
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
        details=json_property(r.get("details")),
        evidence=list(r.get("evidence") or []),
        recorded_at=when(r.get("recordedAt") or r.get("createdAt")),
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
    return StoredRecord(
        id=row["id"],
        data=row["data"],
        created_at=when(row.get("createdAt")),
        recorded_at=when(row.get("recordedAt")),
    )


# --- the knowledge graph (MCP memory-server tools) --------------------------------------
def kg_entity(row: Row) -> KGEntity:
    return KGEntity(
        name=str(row["name"]),
        entity_type=str(row["entityType"]),
        observations=[str(o) for o in row["observations"] or []],
    )


def kg_relation(row: Row) -> KGRelation:
    return KGRelation(
        source=str(row["source"]),
        target=str(row["target"]),
        relation_type=str(row["relationType"]),
    )
