"""The README's Browser guide: every saved query in cypher/browser runs with the
parameters the guide sets, and shows the data an agent put in through the service."""

from __future__ import annotations

from graphmem.memory import Memory
from graphmem.stores.neo4j.library import library
from tests.conftest import Stack, run_cypher


async def test_saved_browser_queries_show_the_data(
    service: Memory, tenant: str, stack: Stack
) -> None:
    await service.ingest.add(
        tenant,
        {
            "session_id": "demo",
            "user_id": "ada",
            "content": "I loved dinner at Le Chat Noir in Paris near the Eiffel Tower.",
        },
    )
    await service.spills.spill(tenant, "demo")
    assert service.episodes is not None
    episode = await service.episodes.record_episode(
        tenant,
        description="Book a flight",
        outcome="booked",
        success=True,
        steps=[
            {"action": "book AF1234", "status": "failed"},
            {"action": "book AF5678", "status": "succeeded"},
        ],
    )
    await service.episodes.reflect(tenant)
    params = {"tenant": tenant, "sessionId": "demo", "userId": "ada", "taskId": episode.task_id}
    lib = library()
    names = lib.names("browser")
    assert names == [
        "browser/reflections",
        "browser/session_memories",
        "browser/task_episodes",
        "browser/user_entities",
    ]
    for name in names:
        rows = await run_cypher(stack, lib.text(name), **params)
        assert rows, f"{name} returned nothing"
    entities = await run_cypher(stack, lib.text("browser/user_entities"), **params)
    assert {r["e"]["name"] for r in entities} >= {"Le Chat Noir", "Paris", "Eiffel Tower"}
    # another tenant's parameters see none of it
    other = await run_cypher(
        stack, lib.text("browser/session_memories"), **(params | {"tenant": tenant + "-other"})
    )
    assert other == []
