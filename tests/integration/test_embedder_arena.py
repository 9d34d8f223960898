"""Which embedder sessions keep onnxruntime's memory arena, as ``from_settings`` builds
them: the arena never gives memory back, so only the sessions that embed batches all day
keep it (``Settings.embedder_arena``, docs/operations.md "Enrichment")."""

from __future__ import annotations

from graphmem.enrich.embed import Embedder
from graphmem.enrich.minilm import MiniLMInt8Embedder
from graphmem.memory import Memory
from graphmem.memory.builder import MemoryBuilder
from tests.conftest import Stack


def arena(embedder: Embedder) -> bool:
    assert isinstance(embedder, MiniLMInt8Embedder)
    return bool(embedder._session.get_session_options().enable_cpu_mem_arena)


async def test_the_api_embeds_without_the_arena_and_the_worker_with_it(stack: Stack) -> None:
    built: list[Memory] = []
    try:
        api = MemoryBuilder.from_settings(stack.settings()).build()
        built.append(api)
        assert not arena(api.embedder)  # write-behind: the workers embed the batches
        assert not arena(api.ranker.query_vectors.embedder)
        worker = MemoryBuilder.from_settings(stack.settings(), enriches=True).build()
        built.append(worker)
        assert arena(worker.embedder)
        alone = MemoryBuilder.from_settings(stack.settings(write_behind=False)).build()
        built.append(alone)
        assert arena(alone.embedder)  # no workers: the API embeds every spill itself
        assert not arena(alone.ranker.query_vectors.embedder)
    finally:
        for service in built:
            await service.close()
