"""The agent-curated knowledge graph of the MCP memory-server tools (docs/api.md#mcp):
entities with free-text types and observations, and typed relations between them, as
the reference server ``@modelcontextprotocol/server-memory`` models them.

These are not the NER entities of ``graphmem.memory.entities``: an agent names these
exactly and keeps them until it deletes them (docs/concepts.md#the-knowledge-graph).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class KGEntity(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    entity_type: str
    observations: list[str] = Field(default_factory=list)

    def doc(self) -> dict[str, Any]:
        """As the reference server writes an entity (MCP answers, events, exports)."""
        return {
            "name": self.name,
            "entityType": self.entity_type,
            "observations": list(self.observations),
        }


class KGRelation(BaseModel):
    model_config = ConfigDict(frozen=True)

    source: str  # the reference's ``from`` (a Python keyword)
    target: str  # ``to``
    relation_type: str

    @property
    def key(self) -> tuple[str, str, str]:
        return self.source, self.target, self.relation_type

    def doc(self) -> dict[str, str]:
        """As the reference server writes a relation (MCP answers, events, exports)."""
        return {"from": self.source, "to": self.target, "relationType": self.relation_type}


class KGSubgraph(BaseModel):
    """Entities and the relations that touch them; ``truncated`` when a bound cut either
    list, ``next_cursor`` where the next page of a read starts."""

    entities: list[KGEntity] = Field(default_factory=list)
    relations: list[KGRelation] = Field(default_factory=list)
    truncated: bool = False
    next_cursor: str | None = None


class KGPageEntity(BaseModel):
    """A read page's entity with how many relations start at it."""

    entity: KGEntity
    degree: int


class ObservationsAdded(BaseModel):
    """What ``add_observations`` did: either ``added`` per entity, or, having written
    nothing, the entities it did not find (``missing``) or that would have passed the
    per-entity bound (``full``)."""

    added: list[tuple[str, list[str]]] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)
    full: list[str] = Field(default_factory=list)


class RelationsCreated(BaseModel):
    """The relations a call created, or (having written nothing) the endpoint names it did
    not find."""

    created: list[KGRelation] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)
