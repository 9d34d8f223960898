"""Store items and the knowledge graph in an export, and back in an import.

An export holds the items (``kind: item``: namespace, key, value, createdAt, updatedAt;
no vectors: the target embeds them again, as it does memories) and, for a whole tenant,
its knowledge graph: every entity (``kind: kg_entity``) before any relation
(``kind: kg_relation``), since a relation needs both ends.

An import writes items with ``putItems`` carrying their exported times: the server
never lets such a put replace a version as new or newer, so a second import changes
nothing. Entities and relations go through ``mergeKnowledgeGraph``, which adds only
what the graph lacks. Both are batched; a batch the API refuses is halved until the
refused lines are alone, and those are skipped with their line numbers, as memories are.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from graphmem.client import BadInput, Graphmem, NotFound, StoreItem
from graphmem.transfer.sources import GraphEntry, ItemEntry, Skipped

#: items one export page reads; entities one graph page reads
ITEM_PAGE, GRAPH_PAGE = 500, 200
#: the API's bounds per call: puts, entities or relations, observations
MAX_PUTS, MAX_GRAPH, MAX_OBSERVATIONS = 500, 100, 1000


def item_line(item: StoreItem) -> dict[str, Any]:
    return {
        "kind": "item",
        "namespace": list(item.namespace),
        "key": item.key,
        "value": item.value,
        "createdAt": item.created_at.isoformat(),
        "updatedAt": item.updated_at.isoformat(),
    }


def _line(out: TextIO, doc: dict[str, Any]) -> None:
    out.write(json.dumps(doc, ensure_ascii=False) + "\n")


def export_items(gm: Graphmem, out: TextIO, prefix: Sequence[str] = ()) -> int:
    """Every store item under the prefix (a user's: ``("users", id)``), by namespace."""
    count = 0
    after: tuple[Sequence[str], str] | None = None
    while True:
        page = gm.store_items(prefix, after=after, first=ITEM_PAGE)
        for found in page:
            _line(out, item_line(found))
        count += len(page)
        if len(page) < ITEM_PAGE:
            return count
        after = page[-1].namespace, page[-1].key


def export_graph(gm: Graphmem, out: TextIO) -> tuple[int, int]:
    """The tenant's knowledge graph: (entities, relations). The graph is read twice,
    entities then relations, so that an import meets every end before its relations
    without this process holding the graph."""
    entities = relations = 0
    for with_relations in (False, True):
        after: str | None = None
        while True:
            page = gm.knowledge_graph(after=after, limit=GRAPH_PAGE)
            if with_relations:
                for r in page.relations:
                    _line(out, {"kind": "kg_relation", **r})
                relations += len(page.relations)
            else:
                for e in page.entities:
                    _line(out, {"kind": "kg_entity", **e})
                entities += len(page.entities)
            if page.next is None:
                break
            after = page.next
    return entities, relations


@dataclass
class GraphCounts:
    #: items this import wrote; items the target held as new already (or newer)
    items: int = 0
    items_held: int = 0
    entities: int = 0
    observations: int = 0
    relations: int = 0
    #: entities and relations the target's graph had already
    graph_held: int = 0


class GraphImport:
    """The items and graph lines of one import, batched; ``erased`` says whether an
    item was erased since (its user's forgetUser), ``skip`` hears of refused lines."""

    def __init__(
        self,
        gm: Graphmem,
        batch: int,
        skip: Callable[[Skipped], None],
        erased: Callable[[ItemEntry], bool],
    ) -> None:
        self.gm = gm
        self.batch = min(batch, MAX_PUTS)
        self.skip = skip
        self.erased = erased
        self.counts = GraphCounts()
        self.dropped = 0
        self._items: list[ItemEntry] = []
        self._entities: list[GraphEntry] = []
        self._relations: list[GraphEntry] = []

    def add(self, entry: ItemEntry | GraphEntry) -> None:
        if isinstance(entry, ItemEntry):
            if self.erased(entry):
                self.dropped += 1
                return
            self._items.append(entry)
            if len(self._items) >= self.batch:
                self._put(self._items)
                self._items = []
        elif entry.kind == "kg_entity":
            held = sum(len(e.doc["observations"]) for e in self._entities)
            if self._entities and (
                len(self._entities) >= MAX_GRAPH
                or held + len(entry.doc["observations"]) > MAX_OBSERVATIONS
            ):
                self._flush_entities()
            self._entities.append(entry)
        else:
            self._flush_entities()  # a relation's ends go first
            self._relations.append(entry)
            if len(self._relations) >= MAX_GRAPH:
                self._merge([], self._relations)
                self._relations = []

    def flush(self) -> None:
        if self._items:
            self._put(self._items)
            self._items = []
        self._flush_entities()
        if self._relations:
            self._merge([], self._relations)
            self._relations = []

    def _flush_entities(self) -> None:
        if self._entities:
            self._merge(self._entities, [])
            self._entities = []

    def _put(self, entries: Sequence[ItemEntry]) -> None:
        puts = [
            {
                "namespace": list(e.namespace),
                "key": e.key,
                "valueJson": json.dumps(e.value, ensure_ascii=False),
                "createdAt": e.created_at,
                "updatedAt": e.updated_at,
            }
            for e in entries
        ]
        try:
            written = self.gm.put_items(puts)
        except BadInput as exc:
            self._halve(entries, exc.message, self._put)
            return
        self.counts.items += written
        self.counts.items_held += len(entries) - written

    def _merge(self, entities: Sequence[GraphEntry], relations: Sequence[GraphEntry]) -> None:
        try:
            done = self.gm.merge_knowledge_graph(
                [e.doc for e in entities], [r.doc for r in relations]
            )
        except (BadInput, NotFound) as exc:
            both = [*entities, *relations]
            self._halve(both, exc.message, self._merge_part)
            return
        self.counts.entities += done.entities_created
        self.counts.observations += done.observations_added
        self.counts.relations += done.relations_created
        made = done.entities_created + done.relations_created
        self.counts.graph_held += len(entities) + len(relations) - made

    def _merge_part(self, part: Sequence[GraphEntry]) -> None:
        self._merge(
            [e for e in part if e.kind == "kg_entity"], [r for r in part if r.kind != "kg_entity"]
        )

    def _halve(self, entries: Sequence[Any], reason: str, again: Callable[[Any], None]) -> None:
        # the API writes a call whole or not at all: halve until the refused are alone
        if len(entries) == 1:
            kind = "item" if isinstance(entries[0], ItemEntry) else entries[0].kind
            self.skip(Skipped(entries[0].where, f"{kind}: {reason}"))
            return
        half = len(entries) // 2
        again(entries[:half])
        again(entries[half:])
