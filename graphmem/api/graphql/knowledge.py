"""The knowledge graph of the MCP memory-server tools over GraphQL: read a page at a
time and merged in, what ``graphmem export`` and ``graphmem import`` carry (the tools
themselves are MCP's, ``api/mcp_graph.py``)."""

from __future__ import annotations

from typing import Any

import strawberry
from pydantic import TypeAdapter
from strawberry.types import Info

from graphmem.api.graphql.context import service_of
from graphmem.domain.knowledge import KGEntity, KGRelation
from graphmem.errors import BadInput, Unavailable
from graphmem.memory.entities import graph as kg

_ENTITIES: TypeAdapter[list[kg.EntityInput]] = TypeAdapter(list[kg.EntityInput])
_RELATIONS: TypeAdapter[list[kg.RelationInput]] = TypeAdapter(list[kg.RelationInput])


def graph_of(info: Info[Any, Any]) -> tuple[kg.KnowledgeGraph, str]:
    service, tenant = service_of(info)
    if service.knowledge is None:
        raise Unavailable("this server keeps no knowledge graph")
    return service.knowledge, tenant


@strawberry.type(name="KgEntity", description="An entity of the MCP tools' knowledge graph.")
class KgEntityOut:
    name: str
    entity_type: str
    observations: list[str]

    @classmethod
    def of(cls, e: KGEntity) -> KgEntityOut:
        return cls(name=e.name, entity_type=e.entity_type, observations=list(e.observations))


@strawberry.type(name="KgRelation", description="A relation of the MCP tools' knowledge graph.")
class KgRelationOut:
    source: str = strawberry.field(name="from")
    target: str = strawberry.field(name="to")
    relation_type: str

    @classmethod
    def of(cls, r: KGRelation) -> KgRelationOut:
        return cls(source=r.source, target=r.target, relation_type=r.relation_type)


@strawberry.type(description="A page of the knowledge graph, as MCP read_graph answers.")
class KnowledgeGraphPage:
    entities: list[KgEntityOut]
    relations: list[KgRelationOut] = strawberry.field(
        description="The relations that start at this page's entities."
    )
    truncated: bool
    next_cursor: str | None


@strawberry.input(description="An entity to merge into the knowledge graph.")
class KgEntityInput:
    name: str
    entity_type: str
    observations: list[str]


@strawberry.input(description="A relation to merge into the knowledge graph.")
class KgRelationInput:
    source: str = strawberry.field(name="from")
    target: str = strawberry.field(name="to")
    relation_type: str


@strawberry.type(description="What a merge added; the rest was there already.")
class KgMerged:
    entities_created: int
    observations_added: int
    relations_created: int


@strawberry.type
class KnowledgeQuery:
    @strawberry.field(
        description="One page of the tenant's knowledge graph (the MCP tools'), entities by "
        "name after `after` (the previous page's nextCursor), up to `limit` (1 to 1,000)."
    )
    async def knowledge_graph(
        self, info: Info[Any, Any], after: str | None = None, limit: int = 200
    ) -> KnowledgeGraphPage:
        graph, tenant = graph_of(info)
        page = await graph.read_graph(tenant, after, limit)
        return KnowledgeGraphPage(
            entities=[KgEntityOut.of(e) for e in page.entities],
            relations=[KgRelationOut.of(r) for r in page.relations],
            truncated=page.truncated,
            next_cursor=page.next_cursor,
        )


@strawberry.type
class KnowledgeMutation:
    @strawberry.mutation(
        description="Merge entities (with their observations) and then relations into the "
        "knowledge graph, adding only what it lacks: an entity it has keeps its type and "
        "gains the observations it did not hold. Relations need both ends (NOT_FOUND). "
        "At most 100 entities, 1,000 observations and 100 relations per call."
    )
    async def merge_knowledge_graph(
        self,
        info: Info[Any, Any],
        entities: list[KgEntityInput] | None = None,
        relations: list[KgRelationInput] | None = None,
    ) -> KgMerged:
        graph, tenant = graph_of(info)
        ents = entities or []
        rels = relations or []
        if len(ents) > kg.MAX_ITEMS or len(rels) > kg.MAX_ITEMS:
            raise BadInput(f"at most {kg.MAX_ITEMS} entities and relations per call")
        parsed_e = kg.parsed(
            _ENTITIES,
            [
                {"name": e.name, "entityType": e.entity_type, "observations": e.observations}
                for e in ents
            ],
            "entities",
        )
        parsed_r = kg.parsed(
            _RELATIONS,
            [{"from": r.source, "to": r.target, "relationType": r.relation_type} for r in rels],
            "relations",
        )
        if sum(len(e.observations) for e in parsed_e) > kg.MAX_CALL_OBSERVATIONS:
            raise BadInput(
                f"entities: at most {kg.MAX_CALL_OBSERVATIONS} observations per call",
                field="entities",
            )
        made, added, linked = await graph.merge(tenant, parsed_e, parsed_r)
        return KgMerged(entities_created=made, observations_added=added, relations_created=linked)
