"""A real `graphmem serve` for the LangGraph store tests, with one API key per tenant."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from graphmem.integrations.langgraph import GraphmemStore
from tests.conftest import Stack, serving


@dataclass
class Served:
    url: str
    keys: list[str]
    tenants: list[str]

    def store(self, n: int, **options: object) -> GraphmemStore:
        return GraphmemStore(self.url, self.keys[n], **options)  # type: ignore[arg-type]


@contextmanager
def served(stack: Stack, tenants: int, **env: str) -> Iterator[Served]:
    keys = [f"lg-key-{n}-{uuid.uuid4().hex[:8]}" for n in range(tenants)]
    names = [f"t-lg{n}-{uuid.uuid4().hex[:8]}" for n in range(tenants)]
    with serving(stack, dict(zip(keys, names, strict=True)), **env) as url:
        yield Served(url, keys, names)
