"""CO_OCCURS pairs per memory are bounded (unbounded, a memory of 450 distinct names
wrote 99.5k edges in 13.7 s): every pair while a memory names few entities, each entity with
its nearest neighbours past that, and never more than ``MAX_PAIRS``."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from itertools import combinations
from typing import Any

from graphmem.domain.models import MemoryItem, MemoryType, utcnow
from graphmem.enrich.ner import Extraction, Mention
from graphmem.memory.entities.memory import MAX_PAIRS, EntityMemory
from graphmem.stores.models import AliasRule


class RecordingStore:
    """The two calls ``EntityMemory.write`` makes, in memory."""

    def __init__(self) -> None:
        self.pairs: list[dict[str, Any]] = []

    async def resolution_table(self, tenant: str) -> list[AliasRule]:
        return []

    async def write(
        self,
        tenant: str,
        mentions: Sequence[dict[str, Any]],
        relations: Sequence[dict[str, Any]],
        pairs: Sequence[dict[str, Any]],
    ) -> None:
        self.pairs += pairs


def naming(names: list[str]) -> tuple[MemoryItem, Extraction]:
    content = ", ".join(names)
    now = utcnow()
    item = MemoryItem(
        id="mem_1",
        tenant="t",
        session_id="s",
        content=content,
        type=MemoryType.FACT,
        last_accessed_at=now,
        created_at=now,
        token_count=len(names),
        content_hash="h",
    )
    mentions, at = [], 0
    for name in names:
        mentions.append(Mention(name, name, "PERSON", "PERSON", at, at + len(name)))
        at += len(name) + 2
    return item, Extraction(mentions=mentions)


def pairs_written(names: list[str]) -> list[tuple[str, str]]:
    store = RecordingStore()
    memory = EntityMemory(store, extractor=None)  # type: ignore[arg-type]
    item, found = naming(names)
    asyncio.run(memory.write("t", [item], [found]))
    assert all(p["memoryId"] == "mem_1" for p in store.pairs)
    return [(p["a"], p["b"]) for p in store.pairs]


def test_a_memory_of_450_names_writes_a_bounded_number_of_pairs() -> None:
    names = [f"Person{n:03d} Surname" for n in range(450)]
    pairs = pairs_written(names)
    assert len(pairs) == MAX_PAIRS  # 101,025 before
    assert len(set(pairs)) == len(pairs) and all(a < b for a, b in pairs)
    keys = [f"PERSON|person{n:03d} surname" for n in range(450)]
    # every name still co-occurs with the one named after it
    assert {(keys[n], keys[n + 1]) for n in range(449)} <= set(pairs)


def test_a_memory_of_few_entities_pairs_them_all_as_before() -> None:
    names = ["Alice", "Bob", "Paris", "Alice", "Globex", "Rome"]
    keys = sorted({f"PERSON|{n.lower()}" for n in names})
    assert pairs_written(names) == list(combinations(keys, 2))
    sixteen = [f"Name{n:02d}" for n in range(16)]
    assert len(pairs_written(sixteen)) == 120
