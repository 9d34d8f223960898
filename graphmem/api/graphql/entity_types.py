"""GraphQL types of entity and episodic memory, and their conversion from the store models."""

from __future__ import annotations

from datetime import datetime
from typing import cast

import strawberry
from strawberry.scalars import JSON

from graphmem.memory.entities.memory import EntityType
from graphmem.memory.episodes.patterns import StepStatus
from graphmem.stores import models

strawberry.enum(EntityType, name="EntityType")


@strawberry.type(description="A person, organisation, place ... mentioned in memories")
class Entity:
    id: strawberry.ID = strawberry.field(description="The resolution key, TYPE|normalised name")
    name: str
    type: str
    aliases: list[str] = strawberry.field(description="Surface forms seen for it")
    mention_count: int
    first_seen: datetime | None
    last_seen: datetime | None
    merged_from: list[strawberry.ID] = strawberry.field(
        description="Entities merged into this one (undo with undoMerge)"
    )

    @classmethod
    def of(cls, e: models.Entity) -> Entity:
        return cls(
            id=strawberry.ID(e.key),
            name=e.name,
            type=e.type,
            aliases=list(e.aliases),
            mention_count=e.mention_count,
            first_seen=e.first_seen,
            last_seen=e.last_seen,
            merged_from=[strawberry.ID(k) for k in e.merged_from],
        )


@strawberry.type(description="An entity as one user mentioned it")
class UserEntity:
    entity: Entity
    count: int
    first_seen: datetime | None
    last_seen: datetime | None

    @classmethod
    def of(cls, u: models.UserEntity) -> UserEntity:
        return cls(
            entity=Entity.of(u.entity),
            count=u.count,
            first_seen=u.first_seen,
            last_seen=u.last_seen,
        )


@strawberry.type
class EntityMention:
    memory_id: strawberry.ID
    content: str
    surface: str
    via: str = strawberry.field(description="exact, normalised, alias or split")
    created_at: datetime | None
    user_id: strawberry.ID | None


@strawberry.type(description="A relation to another entity; closed when validUntil is set")
class EntityRelation:
    type: str
    direction: str = strawberry.field(description="out: this entity is the subject")
    other_id: strawberry.ID
    other_name: str
    valid_from: datetime | None
    valid_until: datetime | None
    sources: list[strawberry.ID] = strawberry.field(description="Memories asserting it")
    closed_by: strawberry.ID | None = strawberry.field(description="Memory that closed it")
    recorded_at: datetime | None = strawberry.field(
        default=None, description="Record time: when graphmem learned the relation"
    )
    closed_at: datetime | None = strawberry.field(
        default=None, description="Record time: when graphmem learned it had ended"
    )


@strawberry.type
class CoOccurrence:
    other_id: strawberry.ID
    weight: int


@strawberry.type
class EntityDetail:
    entity: Entity
    mentions: list[EntityMention]
    relations: list[EntityRelation]
    cooccurring: list[CoOccurrence]

    @classmethod
    def of(cls, d: models.EntityDetail) -> EntityDetail:
        return cls(
            entity=Entity.of(d.entity),
            mentions=[
                EntityMention(
                    memory_id=strawberry.ID(m.memory_id),
                    content=m.content,
                    surface=m.surface,
                    via=m.via,
                    created_at=m.created_at,
                    user_id=strawberry.ID(m.user_id) if m.user_id else None,
                )
                for m in d.mentions
            ],
            relations=[
                EntityRelation(
                    type=r.type,
                    direction=r.direction,
                    other_id=strawberry.ID(r.other),
                    other_name=r.other_name,
                    valid_from=r.valid_from,
                    valid_until=r.valid_until,
                    sources=[strawberry.ID(s) for s in r.sources],
                    closed_by=strawberry.ID(r.closed_by) if r.closed_by else None,
                    recorded_at=r.recorded_at,
                    closed_at=r.closed_at,
                )
                for r in d.outgoing + d.incoming
            ],
            cooccurring=[
                CoOccurrence(other_id=strawberry.ID(c.other), weight=c.weight)
                for c in d.cooccurring
            ],
        )


@strawberry.type
class MergeResult:
    merge_id: strawberry.ID
    source_id: strawberry.ID
    target_id: strawberry.ID


strawberry.enum(StepStatus, name="StepStatus")


@strawberry.type
class Step:
    id: strawberry.ID
    action: str
    result: str | None
    status: StepStatus
    order: int
    started_at: datetime | None
    ended_at: datetime | None
    owner: str | None = strawberry.field(description="The handle's owner that wrote it")
    generation: int | None = strawberry.field(description="The handle's generation")

    @classmethod
    def of(cls, s: models.Step) -> Step:
        return cls(
            id=strawberry.ID(s.id),
            action=s.action,
            result=s.result,
            status=StepStatus(s.status),
            order=s.order,
            started_at=s.started_at,
            ended_at=s.ended_at,
            owner=s.owner,
            generation=s.generation,
        )


@strawberry.type(description="One hand-over of a task (the task's transfer audit trail)")
class Transfer:
    from_owner: str | None
    to_owner: str
    from_generation: int
    to_generation: int
    reason: str | None
    at: datetime | None

    @classmethod
    def of(cls, x: models.Transfer) -> Transfer:
        return cls(
            from_owner=x.from_owner,
            to_owner=x.to_owner,
            from_generation=x.from_generation,
            to_generation=x.to_generation,
            reason=x.reason,
            at=x.at,
        )


@strawberry.type(description="Who may write a task's steps now")
class TaskHandle:
    task_id: strawberry.ID
    owner: str | None
    generation: int


@strawberry.type
class Task:
    id: strawberry.ID
    description: str
    status: str
    owner: str | None
    generation: int
    created_at: datetime | None
    completed_at: datetime | None
    steps: list[Step]
    episode_ids: list[strawberry.ID]
    transfers: list[Transfer]

    @classmethod
    def of(
        cls,
        t: models.Task,
        steps: list[models.Step] | None = None,
        episodes: list[str] | None = None,
        transfers: list[models.Transfer] | None = None,
    ) -> Task:
        return cls(
            id=strawberry.ID(t.id),
            description=t.description,
            status=t.status,
            owner=t.owner,
            generation=t.generation,
            created_at=t.created_at,
            completed_at=t.completed_at,
            steps=[Step.of(s) for s in steps or []],
            episode_ids=[strawberry.ID(e) for e in episodes or []],
            transfers=[Transfer.of(x) for x in transfers or []],
        )


@strawberry.type
class Episode:
    id: strawberry.ID
    task_id: strawberry.ID
    description: str | None
    outcome: str
    success: bool
    signature: str | None
    lessons: list[str]
    metrics: JSON
    mappings: JSON
    created_at: datetime | None = strawberry.field(
        description="Valid time: when it happened (when it was recorded; an imported "
        "episode keeps the exported time)"
    )
    recorded_at: datetime | None = strawberry.field(
        description="Record time: when graphmem learned of it (asOf compares this)"
    )

    @classmethod
    def of(cls, e: models.Episode) -> Episode:
        return cls(
            id=strawberry.ID(e.id),
            task_id=strawberry.ID(e.task_id),
            description=e.description,
            outcome=e.outcome,
            success=e.success,
            signature=e.signature,
            lessons=list(e.lessons),
            metrics=cast(JSON, e.metrics),
            mappings=cast(JSON, e.mappings),
            created_at=e.created_at,
            recorded_at=e.recorded_at,
        )


@strawberry.type
class ScoredEpisode:
    episode: Episode
    similarity: float = strawberry.field(
        description="the cosine on the relevance scale, plus the signature boost"
    )
    cosine: float
    signature_match: bool

    @classmethod
    def of(cls, row: models.ScoredEpisode) -> ScoredEpisode:
        return cls(
            episode=Episode.of(row.episode),
            similarity=row.similarity,
            cosine=row.cosine,
            signature_match=row.signature_match,
        )


@strawberry.type(description="The winning value for one key, by similarity-weighted votes")
class MappingVote:
    key: str
    value: str
    confidence: float = strawberry.field(description="The winner's share of the votes, 0-1")
    votes: float
    alternatives: JSON = strawberry.field(description="Every value with its vote total")


@strawberry.type
class PriorKnowledge:
    votes: list[MappingVote]
    episodes: list[ScoredEpisode]


@strawberry.type
class Reflection:
    id: strawberry.ID
    kind: str = strawberry.field(description="recovery, repeated_failure, success_rate or summary")
    pattern: str
    support: int
    confidence: float
    signature: str | None
    details: JSON
    evidence: list[strawberry.ID] = strawberry.field(description="Episodes it derives from")
    recorded_at: datetime | None = strawberry.field(
        description="When reflect first found it (it is updated in place after that)"
    )

    @classmethod
    def of(cls, r: models.Reflection) -> Reflection:
        return cls(
            id=strawberry.ID(r.id),
            kind=r.kind,
            pattern=r.pattern,
            support=r.support,
            confidence=r.confidence,
            signature=r.signature,
            details=cast(JSON, r.details),
            evidence=[strawberry.ID(e) for e in sorted(r.evidence)],
            recorded_at=r.recorded_at,
        )


@strawberry.input
class StepInput:
    action: str
    result: str | None = None
    status: StepStatus = StepStatus.SUCCEEDED


@strawberry.input
class EpisodeInput:
    outcome: str
    success: bool
    task_id: strawberry.ID | None = None
    description: str | None = None
    steps: list[StepInput] | None = None
    signature: str | None = None
    structure: list[str] | None = strawberry.field(
        default=None, description="Names (columns, fields) to derive the signature from"
    )
    lessons: list[str] | None = None
    metrics: JSON | None = None
    mappings: JSON | None = strawberry.field(
        default=None, description="key → value choices that priorKnowledge votes on"
    )
