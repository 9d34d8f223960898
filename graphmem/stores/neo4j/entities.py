"""Entity nodes and their edges in Neo4j, by named Cypher."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from graphmem.domain.moments import NOW, Moment
from graphmem.stores.models import AliasRule, EntityDetail, MergeResult, UserEntity
from graphmem.stores.neo4j import records_kinds as parse
from graphmem.stores.neo4j.session import Neo4jSession


class Neo4jEntityStore:
    """Entity operations over the graph store's driver (same tenant rules, same files)."""

    def __init__(self, graph: Neo4jSession) -> None:
        self.graph = graph

    async def resolution_table(self, tenant: str) -> list[AliasRule]:
        records = await self.graph.run("entity/resolution_table", {"tenant": tenant})
        return [parse.alias_rule(r) for r in records]

    async def write(
        self,
        tenant: str,
        mentions: Sequence[dict[str, Any]],
        relations: Sequence[dict[str, Any]],
        pairs: Sequence[dict[str, Any]],
    ) -> None:
        if not mentions:
            return
        await self.graph.run(
            "entity/upsert_mentions", {"tenant": tenant, "mentions": list(mentions)}
        )
        if relations:
            await self.graph.run(
                "entity/upsert_relations",
                {"tenant": tenant, "relations": list(relations)},
            )
        if pairs:
            await self.graph.run("entity/co_occurrence", {"tenant": tenant, "pairs": list(pairs)})
        # Counted after the edges are stored, by the edges a write made: a failure here
        # leaves them marked, and the write's retry counts them.
        added = sorted({(m["key"], m["memoryId"]) for m in mentions})
        await self.graph.run(
            "entity/count_mentions",
            {
                "tenant": tenant,
                "keys": sorted({key for key, _ in added}),
                "mentions": [{"key": key, "memoryId": memory_id} for key, memory_id in added],
            },
        )

    async def refresh(self, tenant: str, keys: Sequence[str]) -> int:
        """Recompute counts and MENTIONED edges; returns how many orphans were deleted."""
        if not keys:
            return 0
        records = await self.graph.run(
            "entity/refresh_counts", {"tenant": tenant, "keys": list(keys)}
        )
        return int(records[0]["deleted"]) if records else 0

    async def user_entities(
        self,
        tenant: str,
        user_id: str,
        entity_type: str | None,
        limit: int,
        moment: Moment = NOW,
    ) -> list[UserEntity]:
        records = await self.graph.run(
            "entity/user_entities",
            {
                "tenant": tenant,
                "userId": user_id,
                "type": entity_type,
                "limit": limit,
                **moment.params(),
            },
        )
        return [parse.user_entity(r) for r in records]

    async def get(self, tenant: str, key: str, moment: Moment = NOW) -> EntityDetail | None:
        records = await self.graph.run(
            "entity/get", {"tenant": tenant, "key": key, **moment.params()}
        )
        return parse.entity_detail(records[0]) if records else None

    async def merge(
        self, tenant: str, source: str, target: str, merge_id: str, reason: str, now: datetime
    ) -> MergeResult | None:
        records = await self.graph.run(
            "entity/merge",
            {
                "tenant": tenant,
                "source": source,
                "target": target,
                "mergeId": merge_id,
                "reason": reason,
                "now": now,
            },
        )
        return parse.merge_result(records[0]) if records else None

    async def undo_merge(self, tenant: str, merge_id: str) -> MergeResult | None:
        records = await self.graph.run("entity/undo_merge", {"tenant": tenant, "mergeId": merge_id})
        return parse.merge_result(records[0], merge_id) if records else None

    async def find_by_name(self, tenant: str, norm: str) -> list[str]:
        records = await self.graph.run("entity/find_by_name", {"tenant": tenant, "norm": norm})
        return [str(r["key"]) for r in records]

    async def set_alias(
        self, tenant: str, alias: str, canonical: str, kind: str, now: datetime
    ) -> None:
        await self.graph.run(
            "entity/set_alias",
            {"tenant": tenant, "alias": alias, "canonical": canonical, "kind": kind, "now": now},
        )

    async def split(
        self, tenant: str, key: str, surface: str, new_key: str, name: str, now: datetime
    ) -> bool:
        records = await self.graph.run(
            "entity/split_surface",
            {
                "tenant": tenant,
                "key": key,
                "surface": surface,
                "newKey": new_key,
                "name": name,
                "now": now,
            },
        )
        return bool(records)
