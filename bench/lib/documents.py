"""GraphQL documents the load programs share (soak, mixed)."""

from __future__ import annotations

ADD = "mutation($i: AddMemoryInput!) { addMemory(input: $i) { id } }"
SPILL = """mutation($s: ID!, $n: Int) { spill(sessionId: $s, count: $n) {
  spilledCount warmIds coldIds } }"""


RECALL = """mutation($i: RecallInput!) { recall(input: $i) {
  items { id tier } promoted scores { itemId score } } }"""
