"""The knowledge graph of the MCP memory-server tools: what an agent configured for the
reference server ``@modelcontextprotocol/server-memory`` keeps (entities named exactly,
with a free-text type and observations; relations ``from``-``relationType``-``to``),
in the tenant's graph, with that server's semantics and graphmem's bounds.

Why a graph of its own (``:KGEntity``, ``:KG_RELATION``) beside the NER entities, and
why observations are properties rather than memories: docs/concepts.md#the-knowledge-graph.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from typing import Annotated, Any, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
)

from graphmem.domain.knowledge import KGEntity, KGRelation, KGSubgraph
from graphmem.domain.models import EventKind, utcnow
from graphmem.errors import BadInput, NotFound
from graphmem.memory.tiers.quota import UNLIMITED, Quota, charged, text_bytes
from graphmem.stores import ChangeFeed, KnowledgeStore
from graphmem.stores.null import NullBus

log = logging.getLogger("graphmem.memory")

T = TypeVar("T")

#: entities, relations, names or observation groups one call may carry
MAX_ITEMS = 100
#: observations one call may add (over all its entities)
MAX_CALL_OBSERVATIONS = 1000
#: observations an entity may hold: its node stays a bounded size
MAX_ENTITY_OBSERVATIONS = 500
MAX_NAME_CHARS = 256
MAX_TYPE_CHARS = 128
MAX_OBSERVATION_CHARS = 2000
MAX_QUERY_CHARS = 256
#: entities search_nodes returns, at most (then ``truncated``)
SEARCH_LIMIT = 200
#: entities a read_graph page holds by default, and at most
PAGE_DEFAULT, PAGE_MAX = 200, 1000
#: relations one answer holds, at most; a read page ends early rather than cut them
RELATION_BUDGET = 2000


def _encodable(value: str) -> str:
    # a lone surrogate survives JSON decoding but no store can hold or compare it
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("not valid Unicode text") from None
    return value


Name = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_NAME_CHARS), AfterValidator(_encodable)
]
TypeName = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_TYPE_CHARS), AfterValidator(_encodable)
]
Observation = Annotated[
    str,
    StringConstraints(min_length=1, max_length=MAX_OBSERVATION_CHARS),
    AfterValidator(_encodable),
]
Query = Annotated[str, StringConstraints(max_length=MAX_QUERY_CHARS), AfterValidator(_encodable)]

_STRICT = ConfigDict(strict=True, frozen=True, populate_by_name=True)


class EntityInput(BaseModel):
    model_config = _STRICT
    name: Name
    entity_type: TypeName = Field(alias="entityType")
    observations: list[Observation] = Field(max_length=MAX_ENTITY_OBSERVATIONS)


class RelationInput(BaseModel):
    model_config = _STRICT
    source: Name = Field(alias="from")
    target: Name = Field(alias="to")
    relation_type: TypeName = Field(alias="relationType")


class ObservationInput(BaseModel):
    model_config = _STRICT
    entity_name: Name = Field(alias="entityName")
    contents: list[Observation] = Field(max_length=MAX_ENTITY_OBSERVATIONS)


class DeletionInput(BaseModel):
    model_config = _STRICT
    entity_name: Name = Field(alias="entityName")
    observations: list[Observation] = Field(max_length=MAX_ENTITY_OBSERVATIONS)


def parsed(adapter: TypeAdapter[T], value: Any, field: str) -> T:
    """``value`` through ``adapter``, or BAD_INPUT naming where it is wrong (pydantic's
    own text, which never quotes the input here): the MCP tools' and GraphQL's inputs."""
    try:
        return adapter.validate_python(value)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(p) for p in (field, *first["loc"]))
        raise BadInput(f"{where}: {first['msg']}", field=field) from None


def _count(field: str, items: Sequence[object]) -> None:
    if len(items) > MAX_ITEMS:
        raise BadInput(f"{field}: at most {MAX_ITEMS} per call", field=field)


def _grouped(pairs: Sequence[tuple[str, Sequence[str]]]) -> list[tuple[str, list[str]]]:
    """One group per entity, in first-mention order, each list without repeats: a name
    given twice in one call acts as if given once with both lists."""
    groups: dict[str, dict[str, None]] = {}
    for name, values in pairs:
        groups.setdefault(name, {}).update(dict.fromkeys(values))
    return [(name, list(values)) for name, values in groups.items()]


def _relation(r: RelationInput) -> KGRelation:
    return KGRelation(source=r.source, target=r.target, relation_type=r.relation_type)


def _observation_docs(groups: Sequence[tuple[str, Sequence[str]]]) -> list[dict[str, Any]]:
    return [{"entityName": name, "contents": list(contents)} for name, contents in groups]


class KnowledgeGraph:
    """The nine tools' operations, each one store transaction for the tenant. Writes are
    charged to the tenant's quota (``tiers/quota.py``): an entity or a relation is one
    item, its text its bytes; what a call may add is reserved before it runs (a name
    that exists already is charged until the exact count catches up)."""

    def __init__(
        self, store: KnowledgeStore, quota: Quota = UNLIMITED, events: ChangeFeed | None = None
    ) -> None:
        self.store = store
        self.quota = quota
        #: the change feed hears each write that changed something, after it committed
        self.events: ChangeFeed = events or NullBus()

    async def create_entities(self, tenant: str, entities: Sequence[EntityInput]) -> list[KGEntity]:
        """The entities whose names the tenant did not have yet, as created; a name the
        graph (or this call, earlier) already has is ignored, as the reference does."""
        _count("entities", entities)
        fresh: dict[str, KGEntity] = {}
        for e in entities:
            fresh.setdefault(
                e.name,
                KGEntity(
                    name=e.name,
                    entity_type=e.entity_type,
                    observations=list(dict.fromkeys(e.observations)),
                ),
            )
        if not fresh:
            return []
        size = sum(text_bytes(e.name, e.entity_type, *e.observations) for e in fresh.values())
        async with charged(self.quota, tenant, len(fresh), size):
            created = await self.store.create_entities(
                tenant, list(fresh.values()), uuid.uuid4().hex, utcnow()
            )
        if created:
            await self.events.publish(
                tenant, EventKind.KG_ENTITIES_CREATED, entityNames=[e.name for e in created]
            )
        return created

    async def create_relations(
        self, tenant: str, relations: Sequence[RelationInput]
    ) -> list[KGRelation]:
        """The relations that were new on (from, to, relationType). Both ends must be
        entities of the tenant: otherwise NOT_FOUND names them and nothing is written."""
        _count("relations", relations)
        wanted = list({r.key: r for r in map(_relation, relations)}.values())
        if not wanted:
            return []
        size = sum(text_bytes(r.relation_type) for r in wanted)
        async with charged(self.quota, tenant, len(wanted), size):
            done = await self.store.create_relations(tenant, wanted, uuid.uuid4().hex, utcnow())
        if done.missing:
            names = sorted(set(done.missing))
            raise NotFound(f"no entity named {', '.join(map(repr, names))}", entityNames=names)
        if done.created:
            await self.events.publish(
                tenant,
                EventKind.KG_RELATIONS_CREATED,
                relations=[r.doc() for r in done.created],
            )
        return done.created

    async def add_observations(
        self, tenant: str, adds: Sequence[ObservationInput]
    ) -> list[tuple[str, list[str]]]:
        """Per entity, the observations it did not hold yet (now added). An unknown
        entity is NOT_FOUND, as in the reference; an entity that would pass
        ``MAX_ENTITY_OBSERVATIONS`` is BAD_INPUT; either way nothing is written."""
        _count("observations", adds)
        if sum(len(a.contents) for a in adds) > MAX_CALL_OBSERVATIONS:
            raise BadInput(
                f"observations: at most {MAX_CALL_OBSERVATIONS} contents per call",
                field="observations",
            )
        groups = _grouped([(a.entity_name, a.contents) for a in adds])
        if not groups:
            return []
        done = await self.store.add_observations(tenant, groups, MAX_ENTITY_OBSERVATIONS, utcnow())
        if done.missing:
            names = sorted(set(done.missing))
            raise NotFound(
                f"Entity with name {', '.join(map(repr, names))} not found", entityNames=names
            )
        if done.full:
            raise BadInput(
                f"an entity holds at most {MAX_ENTITY_OBSERVATIONS} observations: "
                + ", ".join(map(repr, sorted(set(done.full)))),
                field="observations",
            )
        added = [(name, contents) for name, contents in done.added if contents]
        if added:
            await self.events.publish(
                tenant, EventKind.KG_OBSERVATIONS_ADDED, observations=_observation_docs(added)
            )
        return done.added

    async def delete_entities(self, tenant: str, names: Sequence[str]) -> int:
        """Deletes the named entities and every relation to or from them; names the
        tenant does not have are ignored. Returns how many entities went."""
        _count("entityNames", names)
        unique = list(dict.fromkeys(names))
        deleted = await self.store.delete_entities(tenant, unique) if unique else 0
        if deleted:
            # the store counts what went, not which: the names asked (absent ones were
            # ignored, so a subscriber may hear of a name the graph never held)
            await self.events.publish(tenant, EventKind.KG_ENTITIES_DELETED, entityNames=unique)
        return deleted

    async def delete_observations(self, tenant: str, deletions: Sequence[DeletionInput]) -> int:
        """Removes the given observations; absent entities and observations are ignored."""
        _count("deletions", deletions)
        groups = _grouped([(d.entity_name, d.observations) for d in deletions])
        touched = await self.store.delete_observations(tenant, groups, utcnow()) if groups else 0
        if touched:
            await self.events.publish(
                tenant, EventKind.KG_OBSERVATIONS_DELETED, observations=_observation_docs(groups)
            )
        return touched

    async def delete_relations(self, tenant: str, relations: Sequence[RelationInput]) -> int:
        _count("relations", relations)
        unique = list({r.key: r for r in map(_relation, relations)}.values())
        deleted = await self.store.delete_relations(tenant, unique) if unique else 0
        if deleted:
            await self.events.publish(
                tenant, EventKind.KG_RELATIONS_DELETED, relations=[r.doc() for r in unique]
            )
        return deleted

    async def merge(
        self,
        tenant: str,
        entities: Sequence[EntityInput],
        relations: Sequence[RelationInput],
    ) -> tuple[int, int, int]:
        """What an import writes (``mergeKnowledgeGraph``): the entities the graph lacks,
        the observations the ones it has lack, then the relations; (entities created,
        observations added, relations created). Each step adds only what is missing, so
        a second import adds nothing. A merge that answers an error has written nothing:
        a relation's unknown end is NOT_FOUND before any write, and what the steps wrote
        before a later one failed (quota, an entity's observation cap, the store) is
        removed again."""
        if relations:
            ends = {end for r in relations for end in (r.source, r.target)}
            missing = ends - {e.name for e in entities}
            missing -= await self.store.names_present(tenant, sorted(missing)) if missing else set()
            if missing:
                names = sorted(missing)
                raise NotFound(f"no entity named {', '.join(map(repr, names))}", entityNames=names)
        created = await self.create_entities(tenant, entities) if entities else []
        made = {e.name for e in created}
        rest = [
            ObservationInput(entityName=e.name, contents=e.observations)
            for e in entities
            if e.name not in made and e.observations
        ]
        added: list[tuple[str, list[str]]] = []
        try:
            added = await self.add_observations(tenant, rest) if rest else []
            linked = await self.create_relations(tenant, relations) if relations else []
        except BaseException:
            await self._unmerge(tenant, sorted(made), added)
            raise
        return len(created), sum(len(c) for _, c in added), len(linked)

    async def _unmerge(
        self, tenant: str, created: Sequence[str], added: Sequence[tuple[str, list[str]]]
    ) -> None:
        """Take back what a failed merge wrote. Best effort, as ``Ingest._undo``: what
        cannot be taken back is logged."""
        try:
            if created:
                await self.delete_entities(tenant, created)
            groups = [DeletionInput(entityName=n, observations=c) for n, c in added if c]
            if groups:
                await self.delete_observations(tenant, groups)
        except Exception as exc:
            log.error("a failed knowledge-graph merge of %s left writes behind: %s", tenant, exc)

    async def read_graph(
        self, tenant: str, cursor: str | None = None, limit: int = PAGE_DEFAULT
    ) -> KGSubgraph:
        """One page of the tenant's graph: up to ``limit`` entities by name after
        ``cursor``, with every relation that starts at them. A page ends before an entity
        whose relations would pass ``RELATION_BUDGET`` (only an entity with more than
        that many on its own has them cut, and ``truncated`` says so)."""
        if not 1 <= limit <= PAGE_MAX:
            raise BadInput(f"limit: between 1 and {PAGE_MAX}", field="limit")
        if cursor is not None and not 0 < len(cursor) <= MAX_NAME_CHARS:
            raise BadInput("cursor: the nextCursor of the previous page", field="cursor")
        rows = await self.store.page(tenant, cursor, limit + 1)
        more = len(rows) > limit
        kept: list[KGEntity] = []
        degrees = 0
        for row in rows[:limit]:
            if kept and degrees + row.degree > RELATION_BUDGET:
                more = True
                break
            kept.append(row.entity)
            degrees += row.degree
        if not kept:
            return KGSubgraph()
        relations = await self.store.relations_from(
            tenant, [e.name for e in kept], RELATION_BUDGET + 1
        )
        cut = len(relations) > RELATION_BUDGET
        return KGSubgraph(
            entities=kept,
            relations=relations[:RELATION_BUDGET],
            truncated=more or cut,
            next_cursor=kept[-1].name if more else None,
        )

    async def search_nodes(self, tenant: str, query: str) -> KGSubgraph:
        """Entities whose name, type or an observation contains ``query`` (ignoring case;
        an empty query matches all), by name, up to ``SEARCH_LIMIT``, with the relations
        that touch them (as the reference: either end)."""
        if len(query) > MAX_QUERY_CHARS:
            raise BadInput(f"query: at most {MAX_QUERY_CHARS} characters", field="query")
        found = await self.store.search(
            tenant, query.lower(), SEARCH_LIMIT + 1, RELATION_BUDGET + 1
        )
        return _bounded(found, SEARCH_LIMIT)

    async def open_nodes(self, tenant: str, names: Sequence[str]) -> KGSubgraph:
        """The named entities the tenant has (others are left out, as in the reference),
        with the relations that touch them."""
        _count("names", names)
        unique = list(dict.fromkeys(names))
        if not unique:
            return KGSubgraph()
        return _bounded(await self.store.open(tenant, unique, RELATION_BUDGET + 1), MAX_ITEMS)


def _bounded(found: KGSubgraph, entity_limit: int) -> KGSubgraph:
    entities = found.entities[:entity_limit]
    names = {e.name for e in entities}
    # the store looked one entity further: its relations are not this answer's
    relations = [r for r in found.relations if r.source in names or r.target in names]
    cut = len(found.entities) > entity_limit or len(relations) > RELATION_BUDGET
    return KGSubgraph(entities=entities, relations=relations[:RELATION_BUDGET], truncated=cut)
