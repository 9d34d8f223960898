"""A real `graphmem serve` for the LangGraph store tests, with one API key per tenant."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from graphmem.integrations.langgraph import GraphmemStore
from tests.conftest import Stack, free_port, stack_env, start_server


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
    port = free_port()
    api_keys = ",".join(f"{k}={t}" for k, t in zip(keys, names, strict=True))
    proc = start_server(stack_env(stack, GRAPHMEM_API_KEYS=api_keys, **env), port)
    try:
        yield Served(f"http://127.0.0.1:{port}", keys, names)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
