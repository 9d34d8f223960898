"""GraphQL types of the memory router: short-term messages, personas, structured records,
and what remember and retrieve return."""

from __future__ import annotations

from datetime import datetime
from typing import cast

import strawberry
from strawberry.scalars import JSON

from graphmem.api.graphql.entity_types import ScoredEpisode, UserEntity
from graphmem.api.graphql.types import ScoredMemory
from graphmem.domain.models import MemoryType
from graphmem.memory.kinds import router as manager
from graphmem.memory.kinds.router import MemoryKind
from graphmem.stores import models

strawberry.enum(MemoryKind, name="MemoryKind")


@strawberry.type(description="One message of a session's short-term history")
class Message:
    role: str
    content: str
    timestamp: str

    @classmethod
    def of(cls, m: models.Message) -> Message:
        return cls(role=m.role, content=m.content, timestamp=m.timestamp)


@strawberry.type(description="An agent persona: configured traits plus learned ones")
class Persona:
    agent_id: strawberry.ID
    role: str
    tone: str
    expertise: list[str]
    constraints: list[str]
    learned_traits: list[ScoredMemory]
    prompt: str
    source: str = strawberry.field(description="stored (set through the API) or configured")

    @classmethod
    def of(cls, p: manager.Persona) -> Persona:
        return cls(
            agent_id=strawberry.ID(p.agent_id),
            role=p.role,
            tone=p.tone,
            expertise=p.expertise,
            constraints=p.constraints,
            learned_traits=[ScoredMemory.of(s) for s in p.learned],
            prompt=p.prompt,
            source=p.source,
        )


@strawberry.input
class PersonaInput:
    role: str
    tone: str = ""
    expertise: list[str] = strawberry.field(default_factory=list)
    constraints: list[str] = strawberry.field(default_factory=list)


@strawberry.type(description="A structured record, validated against its JSON schema")
class Record:
    id: strawberry.ID
    schema: str
    data: JSON
    created_at: datetime | None
    recorded_at: datetime | None = strawberry.field(
        description="Record time: when graphmem stored it (records' asOf compares this); "
        "any valid time the record has is a field of its data"
    )

    @classmethod
    def of(cls, r: manager.Record) -> Record:
        return cls(
            id=strawberry.ID(r.id),
            schema=r.schema_name,
            data=cast(JSON, r.data),
            created_at=r.created_at,
            recorded_at=r.recorded_at,
        )


@strawberry.input(description="What to remember and where (the MemoryManager routes it)")
class RememberInput:
    kind: MemoryKind
    content: str | None = None
    session_id: strawberry.ID | None = None
    user_id: strawberry.ID | None = None
    task_id: strawberry.ID | None = None
    agent_id: strawberry.ID | None = None
    type: MemoryType | None = None
    role: str | None = strawberry.field(default=None, description="short_term: user, assistant ...")
    key: str | None = strawberry.field(default=None, description="working: the key to set")
    value: JSON | None = strawberry.field(default=None, description="working: the value")
    schema: str | None = strawberry.field(default=None, description="structured: schema name")
    data: JSON | None = strawberry.field(default=None, description="structured: the record")
    success: bool | None = strawberry.field(default=None, description="episodic: the outcome")


@strawberry.type
class RememberResult:
    kind: MemoryKind
    memory_id: strawberry.ID | None = None
    episode_id: strawberry.ID | None = None
    record_id: strawberry.ID | None = None
    message: Message | None = None
    working: JSON | None = None


@strawberry.type(description="What each memory type holds for a query (MemoryManager.retrieve)")
class Retrieved:
    working: JSON | None = None
    short_term: list[Message] | None = None
    long_term: list[ScoredMemory] | None = None
    persona: Persona | None = None
    episodic: list[ScoredEpisode] | None = None
    entities: list[UserEntity] | None = None
    structured: list[Record] | None = None
