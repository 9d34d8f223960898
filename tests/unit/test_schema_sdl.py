"""schema.graphql is exactly what `graphmem schema` prints (the served schema)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from graphmem.api.graphql.schema import build_schema

ROOT = Path(__file__).resolve().parents[2]


def test_schema_graphql_matches_the_served_schema() -> None:
    committed = (ROOT / "schema.graphql").read_text()
    assert committed == build_schema().as_str() + "\n", (
        "schema.graphql is stale: run `graphmem schema > schema.graphql`"
    )


def test_cli_prints_the_same_sdl() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "graphmem.ops.cli", "schema"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out == (ROOT / "schema.graphql").read_text()


def test_contract_operations_exist() -> None:
    sdl = build_schema().as_str()
    for op in (
        "hot(sessionId: ID!): [MemoryItem!]!",
        "memoryStatus(sessionId: ID!): MemoryStatus!",
        "addMemory(input: AddMemoryInput!): MemoryItem!",
        "addMemories(inputs: [AddMemoryInput!]!): [MemoryItem!]!",
        "recall(input: RecallInput!): RecallResult!",
        "promote(itemId: ID!): MemoryItem!",
        "forget(itemId: ID!): Boolean!",
    ):
        assert op in sdl, op
    assert "search(query: String!, sessionId: ID = null, userId: ID = null, limit: Int! = 10" in sdl
    assert (
        "spill(sessionId: ID!, count: Int = null, itemIds: [ID!] = null, tier: Tier = null): "
        "SpillResult!"
    ) in sdl
    for value in ("MESSAGE", "FACT", "DECISION", "ENTITY", "CONTEXT", "PREFERENCE"):
        assert f"  {value}\n" in sdl
