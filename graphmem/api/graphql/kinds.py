"""The memory types behind one manager (docs/concepts.md#memory-types): working,
short-term, persona, structured records, and retrieval across them."""

from __future__ import annotations

from typing import Any, cast

import strawberry
from strawberry.scalars import JSON
from strawberry.types import Info

from graphmem.api.graphql.context import id_or_none, manager_of, service_of, str_or_none
from graphmem.api.graphql.entity_types import ScoredEpisode, UserEntity
from graphmem.api.graphql.kind_types import (
    Message,
    Persona,
    PersonaInput,
    Record,
    RememberInput,
    RememberResult,
    Retrieved,
)
from graphmem.api.graphql.moments import AsOf
from graphmem.api.graphql.types import ScoredMemory
from graphmem.domain.moments import Moment
from graphmem.memory.kinds.router import MemoryKind
from graphmem.settings import PersonaConfig


@strawberry.type
class KindsQuery:
    @strawberry.field(
        description="A task's working memory (in Redis, shared by every replica; cleared on "
        "completion)."
    )
    async def working_memory(self, info: Info[Any, Any], task_id: strawberry.ID) -> JSON:
        service, tenant = service_of(info)
        return cast(JSON, await service.working.get(tenant, str(task_id)))

    @strawberry.field(description="The last messages of a session's short-term history.")
    async def conversation(
        self, info: Info[Any, Any], session_id: strawberry.ID, last: int = 10
    ) -> list[Message]:
        manager, tenant = manager_of(info)
        return [Message.of(m) for m in await manager.history(tenant, str(session_id), last)]

    @strawberry.field(description="An agent's persona with its most relevant learned traits.")
    async def persona(
        self,
        info: Info[Any, Any],
        agent_id: strawberry.ID,
        query: str = "persona traits",
        limit: int = 3,
    ) -> Persona:
        manager, tenant = manager_of(info)
        return Persona.of(await manager.persona(tenant, str(agent_id), query, limit))

    @strawberry.field(
        description="Structured records of a schema whose fields equal `where`, newest "
        "first. asOf: only those stored by then (record time; records are never changed)."
    )
    async def records(
        self,
        info: Info[Any, Any],
        schema: str,
        where: JSON | None = None,
        limit: int = 50,
        as_of: AsOf = None,
    ) -> list[Record]:
        manager, tenant = manager_of(info)
        moment = Moment.of(as_of)
        rows = await manager.records(tenant, schema, cast(Any, where), limit, moment)
        return [Record.of(r) for r in rows]

    @strawberry.field(description="Retrieve from several memory types at once.")
    async def retrieve(
        self,
        info: Info[Any, Any],
        query: str,
        kinds: list[MemoryKind] | None = None,
        session_id: strawberry.ID | None = None,
        user_id: strawberry.ID | None = None,
        task_id: strawberry.ID | None = None,
        agent_id: strawberry.ID | None = None,
        schema: str | None = None,
        where: JSON | None = None,
        limit: int = 5,
    ) -> Retrieved:
        manager, tenant = manager_of(info)
        found = await manager.retrieve(
            tenant,
            query,
            kinds,
            session_id=str_or_none(session_id),
            user_id=str_or_none(user_id),
            task_id=str_or_none(task_id),
            agent_id=str_or_none(agent_id),
            schema=schema,
            where=where,
            limit=limit,
        )
        return Retrieved(
            working=cast(JSON, found["working"]) if "working" in found else None,
            short_term=[Message.of(m) for m in found["short_term"]]
            if "short_term" in found
            else None,
            long_term=[ScoredMemory.of(s) for s in found["long_term"]]
            if "long_term" in found
            else None,
            persona=Persona.of(found["persona"]) if "persona" in found else None,
            episodic=[ScoredEpisode.of(r) for r in found["episodic"]]
            if "episodic" in found
            else None,
            entities=[UserEntity.of(r) for r in found["entity"]] if "entity" in found else None,
            structured=[Record.of(r) for r in found["structured"]]
            if "structured" in found
            else None,
        )


@strawberry.type
class KindsMutation:
    @strawberry.mutation(description="Add to any memory type (the MemoryManager routes it).")
    async def remember(self, info: Info[Any, Any], input: RememberInput) -> RememberResult:
        manager, tenant = manager_of(info)
        done = await manager.remember(
            tenant,
            input.kind,
            content=input.content,
            session_id=str_or_none(input.session_id),
            user_id=str_or_none(input.user_id),
            task_id=str_or_none(input.task_id),
            agent_id=str_or_none(input.agent_id),
            type=input.type,
            role=input.role,
            key=input.key,
            value=input.value,
            schema=input.schema,
            data=input.data,
            success=True if input.success is None else input.success,
        )
        return RememberResult(
            kind=input.kind,
            memory_id=id_or_none(done.get("memoryId")),
            episode_id=id_or_none(done.get("episodeId")),
            record_id=id_or_none(done.get("recordId")),
            message=Message.of(done["message"]) if "message" in done else None,
            working=cast(JSON, done["working"]) if "working" in done else None,
        )

    @strawberry.mutation(description="Set a key of a task's working memory; returns it all.")
    async def set_working_memory(
        self, info: Info[Any, Any], task_id: strawberry.ID, key: str, value: JSON | None = None
    ) -> JSON:
        service, tenant = service_of(info)
        return cast(JSON, await service.working.set(tenant, str(task_id), key, value))

    @strawberry.mutation(description="Append a message to a session's short-term history.")
    async def add_message(
        self, info: Info[Any, Any], session_id: strawberry.ID, content: str, role: str = "user"
    ) -> Message:
        manager, tenant = manager_of(info)
        return Message.of(await manager.add_message(tenant, str(session_id), role, content))

    @strawberry.mutation(description="Store an agent's persona (overrides the configured one).")
    async def set_persona(
        self, info: Info[Any, Any], agent_id: strawberry.ID, input: PersonaInput
    ) -> Persona:
        manager, tenant = manager_of(info)
        await manager.set_persona(
            tenant,
            str(agent_id),
            PersonaConfig(
                role=input.role,
                tone=input.tone,
                expertise=input.expertise,
                constraints=input.constraints,
            ),
        )
        return Persona.of(await manager.persona(tenant, str(agent_id)))

    @strawberry.mutation(description="Teach an agent's persona a trait (kept as a memory).")
    async def learn_persona_trait(
        self, info: Info[Any, Any], agent_id: strawberry.ID, trait: str
    ) -> strawberry.ID:
        manager, tenant = manager_of(info)
        return strawberry.ID(await manager.learn_trait(tenant, str(agent_id), trait))

    @strawberry.mutation(description="Register (or replace) a JSON schema for records.")
    async def register_record_schema(self, info: Info[Any, Any], name: str, schema: JSON) -> bool:
        manager, tenant = manager_of(info)
        await manager.register_schema(tenant, name, cast(Any, schema))
        return True

    @strawberry.mutation(description="Store a record after validating it against its schema.")
    async def add_record(self, info: Info[Any, Any], schema: str, data: JSON) -> Record:
        manager, tenant = manager_of(info)
        return Record.of(await manager.add_record(tenant, schema, cast(Any, data)))
