"""MemoryManager: one router that adds to and retrieves from every memory type.

| kind        | where it lives                    | added by                      |
|-------------|-----------------------------------|-------------------------------|
| working     | Redis, per task                   | ``WorkingMemory``             |
| short_term  | Redis list per session, TTL       | ``ConversationStore``         |
| long_term   | hot tier → graph, per user        | ``Ingest.add``                |
| persona     | configured + graph; learned traits as memories of ``agent.<id>`` |
| episodic    | tasks, steps, episodes in the graph | ``EpisodicMemory``          |
| entity      | entities extracted when memories spill | ``EntityMemory``         |
| structured  | JSON-schema-checked records in the graph | ``ProfileStore``       |
"""

from __future__ import annotations

import json
import math
import uuid
from datetime import datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel

from graphmem.cputime import in_thread
from graphmem.domain.models import MemoryItem, MemoryType, ScoredMemory, utcnow
from graphmem.domain.moments import NOW, Moment
from graphmem.errors import BadInput, NotFound, Unavailable
from graphmem.memory.entities.memory import EntityMemory
from graphmem.memory.episodes.memory import EpisodicMemory
from graphmem.memory.inputs import Inputs, RecallQuery, json_problem
from graphmem.memory.kinds.records import schemas as record_schemas
from graphmem.memory.kinds.working import WorkingMemory
from graphmem.memory.search.recall import Recall
from graphmem.memory.tiers.ingest import Ingest
from graphmem.memory.tiers.quota import UNLIMITED, Pad, Quota, charged, text_bytes
from graphmem.memory.tiers.spill import Spiller
from graphmem.settings import ID_PATTERN, MemoryConfig, PersonaConfig
from graphmem.stores import ConversationStore, ProfileStore
from graphmem.stores.models import Message

#: structured records are small objects, not documents
MAX_RECORD_BYTES = 64 * 1024
#: checking a schema takes work in proportion to its subschemas (record_schemas.py)
MAX_SCHEMA_BYTES = 64 * 1024
MAX_RECORD_DEPTH = 32


class MemoryKind(StrEnum):
    WORKING = "working"
    SHORT_TERM = "short_term"
    LONG_TERM = "long_term"
    PERSONA = "persona"
    EPISODIC = "episodic"
    ENTITY = "entity"
    STRUCTURED = "structured"


class Persona(BaseModel):
    """An agent's persona as the API shows it: stored or configured, plus learned traits."""

    agent_id: str
    role: str
    tone: str
    expertise: list[str]
    constraints: list[str]
    learned: list[ScoredMemory]
    prompt: str
    #: ``stored`` (set through the API) or ``configured``
    source: str


class Record(BaseModel):
    """A structured record, validated against its JSON schema."""

    id: str
    schema_name: str
    data: dict[str, Any]
    created_at: datetime | None
    #: record time: when graphmem stored it (a record is never changed after)
    recorded_at: datetime | None = None


def persona_user(agent_id: str) -> str:
    return f"agent.{agent_id}"


def _need(value: Any, name: str) -> Any:
    if value is None or (isinstance(value, str) and not value.strip()):
        raise BadInput(f"{name}: required for this kind of memory", field=name)
    return value


class MemoryManager:
    def __init__(
        self,
        ingest: Ingest,
        spills: Spiller,
        recall: Recall,
        working: WorkingMemory,
        config: MemoryConfig,
        profiles: ProfileStore,
        conversation: ConversationStore,
        personas: dict[str, PersonaConfig] | None = None,
        episodes: EpisodicMemory | None = None,
        entities: EntityMemory | None = None,
        quota: Quota = UNLIMITED,
    ) -> None:
        self.ingest = ingest
        self.spills = spills
        self.recall = recall
        self.working = working
        self.config = config
        self.episodes = episodes
        self.entities = entities
        self.profiles = profiles
        self.conversation = conversation
        self.personas = personas or {}
        #: messages, records, schemas and personas are items of the tenant's quota
        self.quota = quota

    # --- short-term -------------------------------------------------------------------------
    async def add_message(self, tenant: str, session_id: str, role: str, content: str) -> Message:
        Inputs.scope(session_id, None)
        if not content.strip():
            raise BadInput("content: must not be empty", field="content")
        if role not in {"user", "assistant", "system", "tool"}:
            raise BadInput("role: user, assistant, system or tool", field="role")
        message = Message(role=role, content=content, timestamp=utcnow().isoformat())
        ttl = self.config.short_term_ttl_seconds
        # A message the history's cap trims away is given back at the next exact count.
        async with charged(self.quota, tenant, 1, text_bytes(json.dumps(message.model_dump()))):
            await self.conversation.append(tenant, session_id, message, ttl)
        await self.quota.holding(tenant, Pad.MESSAGES, session_id, ttl)
        return message

    async def history(self, tenant: str, session_id: str, last: int = 10) -> list[Message]:
        Inputs.scope(session_id, None)
        if not 1 <= last <= self.config.short_term_max_messages:
            raise BadInput(
                f"last: must be between 1 and {self.config.short_term_max_messages}",
                field="last",
            )
        return await self.conversation.last(tenant, session_id, last)

    # --- persona ------------------------------------------------------------------------------
    async def set_persona(self, tenant: str, agent_id: str, persona: PersonaConfig) -> None:
        self._check_agent(agent_id)
        size = text_bytes(persona.role, persona.tone, *persona.expertise, *persona.constraints)
        async with charged(self.quota, tenant, 1, size):
            await self.profiles.set_persona(tenant, agent_id, persona, utcnow())

    async def learn_trait(self, tenant: str, agent_id: str, trait: str) -> str:
        """A learned trait is a long-term memory of the agent, written to the graph now."""
        self._check_agent(agent_id)
        item = await self._add_to_graph(
            tenant,
            {
                "session_id": f"persona.{agent_id}",
                "user_id": persona_user(agent_id),
                "content": trait,
                "type": MemoryType.PREFERENCE,
            },
        )
        return item.id

    async def _add_to_graph(self, tenant: str, spec: dict[str, Any]) -> MemoryItem:
        """An add whose memory is in the graph when it answers. Undone when its spill
        fails: an error means nothing was stored, and the client's retry no duplicate."""
        item = await self.ingest.add(tenant, spec)
        try:
            await self.spills.spill(tenant, item.session_id, item_ids=[item.id])
        except NotFound:
            pass  # an automatic spill took it to the graph first
        except BaseException:
            await self.ingest.undo(tenant, [item])
            raise
        return item

    async def persona(
        self, tenant: str, agent_id: str, query: str = "persona traits", limit: int = 3
    ) -> Persona:
        self._check_agent(agent_id)
        stored = await self.profiles.persona(tenant, agent_id)
        base = stored or self.personas.get(agent_id)
        if base is None:
            raise NotFound(f"no persona for agent {agent_id}", agentId=agent_id)
        learned = await self.recall.search(
            tenant, RecallQuery(user_id=persona_user(agent_id), query=query, limit=limit)
        )
        traits = ", ".join(s.item.content for s in learned) or "none yet"
        prompt = (
            f"You are {base.role}.\nTone: {base.tone or 'neutral'}\n"
            f"Expertise: {', '.join(base.expertise) or 'general'}\n"
            f"Constraints: {', '.join(base.constraints) or 'none'}\n"
            f"Learned behaviors: {traits}"
        )
        return Persona(
            agent_id=agent_id,
            role=base.role,
            tone=base.tone,
            expertise=list(base.expertise),
            constraints=list(base.constraints),
            learned=learned,
            prompt=prompt,
            source="stored" if stored else "configured",
        )

    @staticmethod
    def _check_agent(agent_id: str) -> None:
        if not ID_PATTERN.fullmatch(agent_id):
            raise BadInput("agentId: 1-128 characters of A-Z a-z 0-9 _ . @ -", field="agentId")

    # --- structured ---------------------------------------------------------------------------
    async def register_schema(self, tenant: str, name: str, schema: dict[str, Any]) -> None:
        if not ID_PATTERN.fullmatch(name):
            raise BadInput("name: 1-128 characters of A-Z a-z 0-9 _ . @ -", field="name")
        if not isinstance(schema, dict) or schema.get("type", "object") != "object":
            raise BadInput("schema: a JSON schema of an object is required", field="schema")
        if (problem := json_problem(schema, MAX_RECORD_DEPTH)) is not None:
            raise BadInput(f"schema: {problem}", field="schema")
        if len(json.dumps(schema)) > MAX_SCHEMA_BYTES:
            raise BadInput(f"schema: at most {MAX_SCHEMA_BYTES} bytes of JSON", field="schema")
        await record_schemas.check(schema)
        encoded = json.dumps(schema)
        async with charged(self.quota, tenant, 1, text_bytes(encoded)):
            await self.profiles.set_schema(tenant, name, encoded, utcnow())

    async def add_record(self, tenant: str, schema_name: str, data: dict[str, Any]) -> Record:
        raw = await self.profiles.schema(tenant, schema_name)
        if raw is None:
            raise NotFound(f"no record schema {schema_name}", schema=schema_name)
        schema = json.loads(raw)
        if not isinstance(data, dict):
            raise BadInput("data: a JSON object is required", field="data")
        # A record may be 64 KB of small objects: its checks and its encoding take
        # milliseconds of CPU, in a thread beside the event loop, not on it.
        encoded = await in_thread(_encoded_record, data)
        await record_schemas.validate(schema_name, schema, data)
        fields = {k: v for k, v in data.items() if _queryable(v)}
        record_id = f"rec_{uuid.uuid4().hex}"
        async with charged(self.quota, tenant, 1, text_bytes(encoded)):
            created_at = await self.profiles.add_record(
                tenant, schema_name, record_id, encoded, fields, utcnow()
            )
            if created_at is None:
                raise NotFound(f"no record schema {schema_name}", schema=schema_name)
        # one write stamps both: a record's valid time, if any, is in its data
        return Record(
            id=record_id,
            schema_name=schema_name,
            data=data,
            created_at=created_at,
            recorded_at=created_at,
        )

    async def records(
        self,
        tenant: str,
        schema_name: str,
        where: dict[str, Any] | None = None,
        limit: int = 50,
        moment: Moment = NOW,
    ) -> list[Record]:
        """Records stored by ``moment.as_of`` (now when None). Records are never changed
        or retracted once added, so record time is all a moment can ask of them."""
        if moment.valid_at is not None or moment.history:
            raise BadInput("records: only asOf applies (a record's valid time is its data's)")
        where = where or {}
        if not isinstance(where, dict) or not all(
            isinstance(k, str) and _queryable(v) for k, v in where.items()
        ):
            raise BadInput("where: an object of field → string, number or boolean", field="where")
        if not 1 <= limit <= 1000:
            raise BadInput("limit: must be between 1 and 1000", field="limit")
        rows = await self.profiles.records(tenant, schema_name, where, limit, moment.as_of)
        return [
            Record(
                id=r.id,
                schema_name=schema_name,
                data=json.loads(r.data),
                created_at=r.created_at,
                recorded_at=r.recorded_at,
            )
            for r in rows
        ]

    # --- the router ---------------------------------------------------------------------------
    async def remember(self, tenant: str, kind: MemoryKind, **f: Any) -> dict[str, Any]:
        """Add to one memory type; ``f`` holds what that type needs."""
        if kind is MemoryKind.WORKING:
            data = await self.working.set(
                tenant,
                _need(f.get("task_id"), "taskId"),
                _need(f.get("key"), "key"),
                f.get("value"),
            )
            return {"kind": kind, "working": data}
        if kind is MemoryKind.SHORT_TERM:
            message = await self.add_message(
                tenant,
                _need(f.get("session_id"), "sessionId"),
                f.get("role") or "user",
                _need(f.get("content"), "content"),
            )
            return {"kind": kind, "message": message}
        if kind in (MemoryKind.LONG_TERM, MemoryKind.ENTITY):
            spec = {
                "session_id": _need(f.get("session_id"), "sessionId"),
                "user_id": f.get("user_id"),
                "content": _need(f.get("content"), "content"),
                "type": f.get("type") or MemoryType.FACT,
                "metadata": f.get("metadata") or {},
            }
            if kind is MemoryKind.ENTITY:  # entities are extracted when the memory spills
                item = await self._add_to_graph(tenant, spec)
            else:
                item = await self.ingest.add(tenant, spec)
            return {"kind": kind, "memoryId": item.id}
        if kind is MemoryKind.PERSONA:
            trait_id = await self.learn_trait(
                tenant, _need(f.get("agent_id"), "agentId"), _need(f.get("content"), "content")
            )
            return {"kind": kind, "memoryId": trait_id}
        if kind is MemoryKind.EPISODIC:
            episodes = self._episodes()
            episode = await episodes.record_episode(
                tenant,
                outcome=_need(f.get("content"), "content"),
                success=bool(f.get("success", True)),
                task_id=f.get("task_id"),
                description=f.get("description") or f.get("content"),
            )
            return {"kind": kind, "episodeId": episode.id}
        record = await self.add_record(
            tenant, _need(f.get("schema"), "schema"), _need(f.get("data"), "data")
        )
        return {"kind": kind, "recordId": record.id}

    async def retrieve(
        self, tenant: str, query: str, kinds: list[MemoryKind] | None = None, **f: Any
    ) -> dict[str, Any]:
        """Retrieve from several memory types at once; each answers only when it has the
        scope it needs (a session for short-term, a task for working memory ...)."""
        kinds = kinds or list(MemoryKind)
        limit = int(f.get("limit") or 5)
        out: dict[str, Any] = {}
        session_id, user_id = f.get("session_id"), f.get("user_id")
        if MemoryKind.WORKING in kinds and f.get("task_id"):
            out["working"] = await self.working.get(tenant, f["task_id"])
        if MemoryKind.SHORT_TERM in kinds and session_id:
            out["short_term"] = await self.history(tenant, session_id, limit)
        if MemoryKind.LONG_TERM in kinds and (user_id or session_id):
            out["long_term"] = await self.recall.search(
                tenant,
                RecallQuery(
                    query=query,
                    user_id=user_id,
                    session_id=None if user_id else session_id,
                    limit=limit,
                ),
            )
        if MemoryKind.PERSONA in kinds and f.get("agent_id"):
            out["persona"] = await self.persona(tenant, f["agent_id"], query)
        if MemoryKind.EPISODIC in kinds and self.episodes is not None:
            out["episodic"] = await self.episodes.similar(tenant, query, None, limit)
        if MemoryKind.ENTITY in kinds and user_id and self.entities is not None:
            out["entity"] = await self.entities.user_entities(tenant, user_id, limit=limit)
        if MemoryKind.STRUCTURED in kinds and f.get("schema"):
            out["structured"] = await self.records(tenant, f["schema"], f.get("where"), limit)
        return out

    def _episodes(self) -> EpisodicMemory:
        if self.episodes is None:
            raise Unavailable("episodic memory is not configured")
        return self.episodes


def _encoded_record(data: dict[str, Any]) -> str:
    """``data`` as the JSON a record stores, or BAD_INPUT saying why it cannot be one."""
    if (problem := json_problem(data, MAX_RECORD_DEPTH)) is not None:
        raise BadInput(f"data: {problem}", field="data")
    encoded = json.dumps(data)
    if len(encoded) > MAX_RECORD_BYTES:
        raise BadInput(f"data: at most {MAX_RECORD_BYTES} bytes of JSON", field="data")
    return encoded


def _queryable(value: Any) -> bool:
    """A value a record field can be stored and matched as: Neo4j integers are 64-bit and
    its floats finite."""
    if isinstance(value, bool | str):
        return True
    if isinstance(value, int):
        return -(2**63) <= value < 2**63
    return isinstance(value, float) and math.isfinite(value)
