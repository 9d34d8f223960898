"""An in-memory ``KnowledgeStore``: the knowledge graph of the MCP memory-server tools as
dicts, meeting ``tests/support/contracts/knowledge.py`` as Neo4j does."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from graphmem.domain.knowledge import (
    KGEntity,
    KGPageEntity,
    KGRelation,
    KGSubgraph,
    ObservationsAdded,
    RelationsCreated,
)


@dataclass
class _Graph:
    entities: dict[str, KGEntity] = field(default_factory=dict)
    relations: dict[tuple[str, str, str], KGRelation] = field(default_factory=dict)

    def touching(self, names: set[str], limit: int) -> list[KGRelation]:
        found = [r for r in self.relations.values() if r.source in names or r.target in names]
        return sorted(found, key=lambda r: r.key)[:limit]


class FakeKnowledgeStore:
    def __init__(self) -> None:
        self.tenants: dict[str, _Graph] = {}

    def _of(self, tenant: str) -> _Graph:
        return self.tenants.setdefault(tenant, _Graph())

    async def create_entities(
        self, tenant: str, entities: Sequence[KGEntity], call_id: str, now: datetime
    ) -> list[KGEntity]:
        graph, made = self._of(tenant), []
        for e in entities:
            if e.name not in graph.entities:
                graph.entities[e.name] = e
                made.append(e)
        return made

    async def create_relations(
        self, tenant: str, relations: Sequence[KGRelation], call_id: str, now: datetime
    ) -> RelationsCreated:
        graph = self._of(tenant)
        missing = [n for r in relations for n in (r.source, r.target) if n not in graph.entities]
        if missing:
            return RelationsCreated(missing=missing)
        made = []
        for r in relations:
            if r.key not in graph.relations:
                graph.relations[r.key] = r
                made.append(r)
        return RelationsCreated(created=made)

    async def add_observations(
        self, tenant: str, adds: Sequence[tuple[str, Sequence[str]]], cap: int, now: datetime
    ) -> ObservationsAdded:
        graph = self._of(tenant)
        missing = [name for name, _ in adds if name not in graph.entities]
        new = {
            name: [c for c in contents if c not in graph.entities[name].observations]
            for name, contents in adds
            if name in graph.entities
        }
        full = [n for n, a in new.items() if len(graph.entities[n].observations) + len(a) > cap]
        if missing or full:
            return ObservationsAdded(missing=missing, full=full)
        for name, added in new.items():
            old = graph.entities[name]
            graph.entities[name] = old.model_copy(
                update={"observations": [*old.observations, *added]}
            )
        return ObservationsAdded(added=list(new.items()))

    async def delete_entities(self, tenant: str, names: Sequence[str]) -> int:
        graph, gone = self._of(tenant), set(names) & set(self._of(tenant).entities)
        for name in gone:
            del graph.entities[name]
        graph.relations = {
            k: r
            for k, r in graph.relations.items()
            if r.source not in gone and r.target not in gone
        }
        return len(gone)

    async def delete_observations(
        self, tenant: str, deletions: Sequence[tuple[str, Sequence[str]]], now: datetime
    ) -> int:
        graph, touched = self._of(tenant), 0
        for name, values in deletions:
            old = graph.entities.get(name)
            if old is not None:
                touched += 1
                kept = [o for o in old.observations if o not in values]
                graph.entities[name] = old.model_copy(update={"observations": kept})
        return touched

    async def delete_relations(self, tenant: str, relations: Sequence[KGRelation]) -> int:
        graph = self._of(tenant)
        return sum(graph.relations.pop(r.key, None) is not None for r in relations)

    async def page(self, tenant: str, after: str | None, limit: int) -> list[KGPageEntity]:
        graph = self._of(tenant)
        names = sorted(n for n in graph.entities if after is None or n > after)[:limit]
        return [
            KGPageEntity(
                entity=graph.entities[n],
                degree=sum(r.source == n for r in graph.relations.values()),
            )
            for n in names
        ]

    async def relations_from(
        self, tenant: str, names: Sequence[str], limit: int
    ) -> list[KGRelation]:
        wanted = set(names)
        found = [r for r in self._of(tenant).relations.values() if r.source in wanted]
        return sorted(found, key=lambda r: r.key)[:limit]

    async def names_present(self, tenant: str, names: Sequence[str]) -> set[str]:
        return set(names) & set(self._of(tenant).entities)

    async def search(
        self, tenant: str, lowered: str, limit: int, relation_limit: int
    ) -> KGSubgraph:
        graph = self._of(tenant)
        found = [
            e
            for _, e in sorted(graph.entities.items())
            if lowered in e.name.lower()
            or lowered in e.entity_type.lower()
            or any(lowered in o.lower() for o in e.observations)
        ][:limit]
        return KGSubgraph(
            entities=found, relations=graph.touching({e.name for e in found}, relation_limit)
        )

    async def open(self, tenant: str, names: Sequence[str], relation_limit: int) -> KGSubgraph:
        graph = self._of(tenant)
        found = [graph.entities[n] for n in names if n in graph.entities]
        return KGSubgraph(
            entities=found, relations=graph.touching({e.name for e in found}, relation_limit)
        )
