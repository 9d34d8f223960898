"""The blocking client's store-item and knowledge-graph methods (``Graphmem`` has them):
what ``graphmem export`` reads and ``graphmem import`` writes beside memories."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from graphmem.client import items
from graphmem.client.items import StoreItem
from graphmem.client.operations import Op, _some

T = TypeVar("T")

GRAPH_PAGE = """query($a: String, $l: Int!) { knowledgeGraph(after: $a, limit: $l) {
  entities { name entityType observations } relations { from to relationType }
  truncated nextCursor } }"""

MERGE = """mutation($e: [KgEntityInput!], $r: [KgRelationInput!]) {
  mergeKnowledgeGraph(entities: $e, relations: $r) {
    entitiesCreated observationsAdded relationsCreated } }"""


@dataclass(frozen=True)
class GraphPage:
    """A page of the knowledge graph: entities as ``{name, entityType, observations}``,
    relations as ``{from, to, relationType}`` (the MCP tools' shapes)."""

    entities: list[dict[str, Any]]
    relations: list[dict[str, Any]]
    next: str | None


@dataclass(frozen=True)
class GraphMerged:
    entities_created: int
    observations_added: int
    relations_created: int


def store_items(
    prefix: Sequence[str], after: tuple[Sequence[str], str] | None, first: int
) -> Op[list[StoreItem]]:
    return Op(
        "query($p: [String!], $a: ItemKeyInput, $f: Int!) "
        f"{{ storeItems(namespacePrefix: $p, after: $a, first: $f) {{ {StoreItem.FIELDS} }} }}",
        _some(
            p=list(prefix),
            a={"namespace": list(after[0]), "key": after[1]} if after else None,
            f=first,
        ),
        lambda d: [StoreItem.of(i) for i in d["storeItems"]],
    )


def knowledge_graph(after: str | None, limit: int) -> Op[GraphPage]:
    def parse(d: dict[str, Any]) -> GraphPage:
        page = d["knowledgeGraph"]
        return GraphPage(page["entities"], page["relations"], page["nextCursor"])

    return Op(GRAPH_PAGE, _some(a=after, l=limit), parse)


def merge_knowledge_graph(
    entities: Sequence[dict[str, Any]], relations: Sequence[dict[str, Any]]
) -> Op[GraphMerged]:
    def parse(d: dict[str, Any]) -> GraphMerged:
        m = d["mergeKnowledgeGraph"]
        return GraphMerged(m["entitiesCreated"], m["observationsAdded"], m["relationsCreated"])

    return Op(MERGE, {"e": list(entities), "r": list(relations)}, parse)


class GraphCalls:
    def _run(self, op: Op[T]) -> T:
        raise NotImplementedError

    def put_items(self, puts: Sequence[dict[str, Any]]) -> int:
        """Puts made with ``graphmem.client.item_put``, in one atomic write."""
        return self._run(items.put_items(puts))

    def search_items(
        self,
        prefix: Sequence[str],
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
    ) -> list[StoreItem]:
        return self._run(items.search_items(prefix, query, filter, limit, offset))

    def store_items(
        self,
        prefix: Sequence[str] = (),
        *,
        after: tuple[Sequence[str], str] | None = None,
        first: int = 100,
    ) -> list[StoreItem]:
        """Every store item under the prefix by namespace and key: ``after`` the previous
        page's last."""
        return self._run(store_items(prefix, after, first))

    def knowledge_graph(self, *, after: str | None = None, limit: int = 200) -> GraphPage:
        return self._run(knowledge_graph(after, limit))

    def merge_knowledge_graph(
        self,
        entities: Sequence[dict[str, Any]] = (),
        relations: Sequence[dict[str, Any]] = (),
    ) -> GraphMerged:
        """Add the entities, observations and relations the graph lacks."""
        return self._run(merge_knowledge_graph(entities, relations))


class AsyncGraphCalls:
    """``GraphCalls``' listings and the graph's calls for the asyncio client (its item
    puts, gets and searches are ``AsyncGraphmem``'s own)."""

    async def _run(self, op: Op[T]) -> T:
        raise NotImplementedError

    async def store_items(
        self,
        prefix: Sequence[str] = (),
        *,
        after: tuple[Sequence[str], str] | None = None,
        first: int = 100,
    ) -> list[StoreItem]:
        """Every store item under the prefix by namespace and key: ``after`` the previous
        page's last."""
        return await self._run(store_items(prefix, after, first))

    async def knowledge_graph(self, *, after: str | None = None, limit: int = 200) -> GraphPage:
        return await self._run(knowledge_graph(after, limit))

    async def merge_knowledge_graph(
        self,
        entities: Sequence[dict[str, Any]] = (),
        relations: Sequence[dict[str, Any]] = (),
    ) -> GraphMerged:
        """Add the entities, observations and relations the graph lacks."""
        return await self._run(merge_knowledge_graph(entities, relations))
