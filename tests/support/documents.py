"""GraphQL documents several tests send: the memory operations, and a fragment bomb."""

from __future__ import annotations

ADD = """
mutation Add($input: AddMemoryInput!) {
  addMemory(input: $input) {
    id sessionId userId content type tier accessCount relevanceScore tokenCount metadata
    createdAt lastAccessedAt
  }
}"""


HOT = "query Hot($s: ID!) { hot(sessionId: $s) { id content tier } }"


SPILL = """
mutation Spill($s: ID!, $count: Int, $ids: [ID!]) {
  spill(sessionId: $s, count: $count, itemIds: $ids) {
    spilledCount spilledIds targetTier coldIds warmIds
  }
}"""


RECALL = """
mutation Recall($input: RecallInput!) {
  recall(input: $input) {
    items { id content tier accessCount relevanceScore metadata }
    promoted
    scores { itemId score similarity }
  }
}"""


STATUS = """
query Status($s: ID!) {
  memoryStatus(sessionId: $s) {
    sessionId
    hot { items tokens limit utilizationPercent }
    warm { items tokens }
    cold { items tokens }
    suggestions { type reason itemIds }
  }
}"""


SEARCH = """
query Search($q: String!, $s: ID, $u: ID, $limit: Int, $types: [MemoryType!]) {
  search(query: $q, sessionId: $s, userId: $u, limit: $limit, types: $types) {
    score item { id content type accessCount }
  }
}"""


def fragment_bomb(levels: int) -> str:
    """Each fragment spreads the next one twice: 2^levels fields once expanded."""
    fragments = " ".join(
        f"fragment F{i} on Query {{ ...F{i + 1} ...F{i + 1} }}" for i in range(levels)
    )
    return f"query {{ ...F0 }} {fragments} fragment F{levels} on Query {{ __typename }}"
