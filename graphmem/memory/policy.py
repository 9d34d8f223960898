"""Rules for reads and writes across tiers, and the demotion hook (docs/concepts.md#builder)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, model_validator

from graphmem.stores import GraphStore


class MemoryRules(BaseModel):
    """How a read or write crosses tiers.

    - ``read_fallback``: ``get(id)`` looks in the graph when the hot tier misses.
    - ``promote_on_read``: an item found in the graph by ``get(id)`` is promoted to hot.
    - ``write_through``: ``add`` returns only after both Redis and Neo4j hold the item
      (the graph copy is embedded on the request path and marked ``tier: 'hot'``).
    - ``hot_ttl``: idle lifetime in seconds of a session's hot tier (None: the config's
      ``sessionTtlSeconds``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    read_fallback: bool = True
    promote_on_read: bool = False
    write_through: bool = False
    hot_ttl: int | None = Field(None, ge=2)

    @model_validator(mode="after")
    def _coherent(self) -> MemoryRules:
        if self.promote_on_read and not self.read_fallback:
            raise ValueError(
                "promote_on_read needs read_fallback: without it nothing is read from the graph"
            )
        return self


@runtime_checkable
class DemotionPolicy(Protocol):
    """Decides which warm memories turn cold; run by maintenance for every tenant."""

    async def demote(self, graph: GraphStore, tenant: str, now: datetime) -> list[str]: ...


@dataclass(frozen=True)
class IdleWarmDemotion:
    """Warm memories not accessed for ``max_idle`` become cold."""

    max_idle: timedelta

    async def demote(self, graph: GraphStore, tenant: str, now: datetime) -> list[str]:
        return await graph.scans.demote_idle_warm(tenant, now - self.max_idle, now)
