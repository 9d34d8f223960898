"""The knowledge graph of the MCP memory-server tools in Neo4j (``cypher/kg``): one
named statement, so one transaction, per call."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from graphmem.domain.knowledge import (
    KGEntity,
    KGPageEntity,
    KGRelation,
    KGSubgraph,
    ObservationsAdded,
    RelationsCreated,
)
from graphmem.stores.neo4j import records_kinds as parse
from graphmem.stores.neo4j.records import Row
from graphmem.stores.neo4j.session import Neo4jSession


def _relation_rows(relations: Sequence[KGRelation]) -> list[dict[str, str]]:
    return [
        {"source": r.source, "target": r.target, "relationType": r.relation_type} for r in relations
    ]


class Neo4jKnowledgeStore:
    def __init__(self, graph: Neo4jSession) -> None:
        self.graph = graph

    async def create_entities(
        self, tenant: str, entities: Sequence[KGEntity], call_id: str, now: datetime
    ) -> list[KGEntity]:
        rows = [
            {"name": e.name, "entityType": e.entity_type, "observations": list(e.observations)}
            for e in entities
        ]
        records = await self.graph.run(
            "kg/create_entities",
            {"tenant": tenant, "entities": rows, "callId": call_id, "now": now},
        )
        return [parse.kg_entity(r) for r in records]

    async def create_relations(
        self, tenant: str, relations: Sequence[KGRelation], call_id: str, now: datetime
    ) -> RelationsCreated:
        records = await self.graph.run(
            "kg/create_relations",
            {
                "tenant": tenant,
                "relations": _relation_rows(relations),
                "callId": call_id,
                "now": now,
            },
        )
        row = records[0]
        return RelationsCreated(
            created=[parse.kg_relation(r) for r in row["created"] or []],
            missing=[str(n) for n in row["missing"]],
        )

    async def add_observations(
        self, tenant: str, adds: Sequence[tuple[str, Sequence[str]]], cap: int, now: datetime
    ) -> ObservationsAdded:
        rows = [{"name": name, "contents": list(contents)} for name, contents in adds]
        records = await self.graph.run(
            "kg/add_observations", {"tenant": tenant, "adds": rows, "cap": cap, "now": now}
        )
        row = records[0]
        return ObservationsAdded(
            added=[(str(a["name"]), [str(c) for c in a["added"]]) for a in row["added"] or []],
            missing=[str(n) for n in row["missing"]],
            full=[str(n) for n in row["full"]],
        )

    async def delete_entities(self, tenant: str, names: Sequence[str]) -> int:
        records = await self.graph.run(
            "kg/delete_entities", {"tenant": tenant, "names": list(names)}
        )
        return int(records[0]["deleted"]) if records else 0

    async def delete_observations(
        self, tenant: str, deletions: Sequence[tuple[str, Sequence[str]]], now: datetime
    ) -> int:
        rows = [{"name": name, "contents": list(contents)} for name, contents in deletions]
        records = await self.graph.run(
            "kg/delete_observations", {"tenant": tenant, "deletions": rows, "now": now}
        )
        return int(records[0]["touched"]) if records else 0

    async def delete_relations(self, tenant: str, relations: Sequence[KGRelation]) -> int:
        records = await self.graph.run(
            "kg/delete_relations", {"tenant": tenant, "relations": _relation_rows(relations)}
        )
        return int(records[0]["deleted"]) if records else 0

    async def page(self, tenant: str, after: str | None, limit: int) -> list[KGPageEntity]:
        records = await self.graph.run(
            "kg/page", {"tenant": tenant, "after": after, "limit": limit}
        )
        return [KGPageEntity(entity=parse.kg_entity(r), degree=int(r["degree"])) for r in records]

    async def relations_from(
        self, tenant: str, names: Sequence[str], limit: int
    ) -> list[KGRelation]:
        records = await self.graph.run(
            "kg/relations_from", {"tenant": tenant, "names": list(names), "limit": limit}
        )
        return [parse.kg_relation(r) for r in records]

    async def names_present(self, tenant: str, names: Sequence[str]) -> set[str]:
        records = await self.graph.run("kg/names_present", {"tenant": tenant, "names": list(names)})
        return {str(n) for n in records[0]["names"]} if records else set()

    async def search(
        self, tenant: str, lowered: str, limit: int, relation_limit: int
    ) -> KGSubgraph:
        records = await self.graph.run(
            "kg/search",
            {"tenant": tenant, "query": lowered, "limit": limit, "relationLimit": relation_limit},
        )
        return _subgraph(records[0]) if records else KGSubgraph()

    async def open(self, tenant: str, names: Sequence[str], relation_limit: int) -> KGSubgraph:
        records = await self.graph.run(
            "kg/open", {"tenant": tenant, "names": list(names), "relationLimit": relation_limit}
        )
        return _subgraph(records[0]) if records else KGSubgraph()


def _subgraph(row: Row) -> KGSubgraph:
    return KGSubgraph(
        entities=[parse.kg_entity(e) for e in row["entities"]],
        relations=[parse.kg_relation(r) for r in row["relations"]],
    )
