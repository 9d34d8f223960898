"""Export what a user owns as JSONL that ``graphmem import`` reads back.

First a ``kind: export`` line with the moment the export was taken (before anything was
read), then one ``kind: receipt`` line per erasure receipt of the tenant, as signed: an
import puts them back in the target's log, and drops what they erased after this moment
(``erased.py``). Then one ``kind: memory`` line per memory, in conversation order, from
every tier, retracted ones included: id, sessionId, userId, content, type, tier, metadata
(without an earlier import's id), occurredAt (the memory's createdAt), recordedAt, and for a
retracted memory retractedAt and retractReason (an import retracts it again). Then one
``kind: entity`` line per entity the user mentioned, for reading; import skips them, since
spilling the memories derives them again. Last, one ``kind: task`` line per task the user
owns (whose owner is the user's id), with its steps, hand-overs and episodes (each with
createdAt and recordedAt), as ``importTask`` takes it back. An import keeps when things
happened and records them anew: a memory's or an episode's recordedAt is read, not kept.
Then the user's store items (those under the namespace ("users", userId, ...), which
forgetUser erases; ``graphs.py``).

Without a user (``export_tenant``), the export holds the receipts, then every store
item of the tenant and its knowledge graph: entities, then relations. The header's
``version`` is 2 since items and the graph travel (version 1 files import as before).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TextIO

from graphmem.client import At, Graphmem, MemoryItem
from graphmem.transfer.graphs import export_graph, export_items
from graphmem.transfer.sources import IMPORT_ID


def memory_line(item: MemoryItem) -> dict[str, Any]:
    return {
        "kind": "memory",
        "id": item.id,
        "sessionId": item.session_id,
        "userId": item.user_id,
        "content": item.content,
        "type": item.type,
        "tier": item.tier,
        "metadata": {k: v for k, v in item.metadata.items() if k != IMPORT_ID},
        "occurredAt": item.created_at.isoformat() if item.created_at else None,
        "recordedAt": item.recorded_at.isoformat() if item.recorded_at else None,
        **(
            {"retractedAt": item.retracted_at.isoformat(), "retractReason": item.retract_reason}
            if item.retracted_at
            else {}
        ),
    }


HISTORY = At(include_history=True)


@dataclass
class Exported:
    memories: int = 0
    entities: int = 0
    tasks: int = 0
    receipts: int = 0
    items: int = 0
    kg_entities: int = 0
    kg_relations: int = 0


#: the export format: 2 added store items and the knowledge graph (docs/integrations.md)
VERSION = 2


def _line(out: TextIO, doc: dict[str, Any]) -> None:
    out.write(json.dumps(doc, ensure_ascii=False) + "\n")


def export_receipts(gm: Graphmem, out: TextIO) -> int:
    """The tenant's erasure receipts, newest first, each as it was signed."""
    count, after = 0, None
    while True:
        page = gm.erasure_receipts(after=after, limit=100)
        for receipt in page.items:
            _line(out, {"kind": "receipt", "receipt": receipt.as_json()})
            count += 1
        if page.next is None:
            return count
        after = page.next


def export_user(gm: Graphmem, user_id: str, out: TextIO) -> Exported:
    """Write the user's memories, entities and tasks; how many of each."""
    done = Exported()
    # Taken before the first read: whatever an erasure removes after it, this file may
    # still hold (the clocks of this machine and the server's are assumed to agree).
    taken = datetime.now(UTC).isoformat()
    _line(out, {"kind": "export", "version": VERSION, "at": taken, "userId": user_id})
    done.receipts = export_receipts(gm, out)
    after: str | None = None
    while True:
        # with history: a retracted memory is exported (and retracted again on import)
        page = gm.memories(user_id=user_id, after=after, at=HISTORY)
        for item in page.items:
            out.write(json.dumps(memory_line(item), ensure_ascii=False) + "\n")
            done.memories += 1
        if page.next is None:
            break
        after = page.next
    for entity in gm.entities(user_id, limit=100):
        line = {
            "kind": "entity",
            "id": entity.id,
            "name": entity.name,
            "type": entity.type,
            "count": entity.count,
            "lastSeen": entity.last_seen.isoformat() if entity.last_seen else None,
        }
        out.write(json.dumps(line, ensure_ascii=False) + "\n")
        done.entities += 1
    after = None
    while True:
        tasks = gm.owned_tasks(user_id, after=after)
        for task in tasks.items:
            out.write(json.dumps({"kind": "task", **task}, ensure_ascii=False) + "\n")
            done.tasks += 1
        if tasks.next is None:
            break
        after = tasks.next
    done.items = export_items(gm, out, ("users", user_id))
    return done


def export_tenant(gm: Graphmem, out: TextIO) -> Exported:
    """Write the tenant's receipts, store items and knowledge graph; how many of each."""
    done = Exported()
    taken = datetime.now(UTC).isoformat()  # before the first read, as export_user's
    _line(out, {"kind": "export", "version": VERSION, "at": taken, "userId": None})
    done.receipts = export_receipts(gm, out)
    done.items = export_items(gm, out)
    done.kg_entities, done.kg_relations = export_graph(gm, out)
    return done
