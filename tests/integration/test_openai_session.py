"""GraphmemSession (the OpenAI Agents SDK's Session) against a real `graphmem serve`: the
behaviours the SDK's own tests ask of SQLiteSession — add, get with limits and settings,
pop, clear, separate sessions, unicode and quoting, concurrent adds — the Runner reading
and writing history through it with an offline model, and an item too large for graphmem
refused with nothing stored."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner
from agents.items import ModelResponse
from agents.memory import Session, SessionSettings
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseOutputMessage, ResponseOutputText

from graphmem.client import Graphmem
from graphmem.integrations.openai_agents import GraphmemSession, ItemError, session_of
from tests.conftest import Stack, serving

KEYS = [f"oa-key-{n}-{uuid.uuid4().hex[:8]}" for n in range(2)]


@pytest.fixture(scope="module")
def url(stack: Stack) -> Iterator[str]:
    with serving(stack, {k: f"t-oa{n}-{uuid.uuid4().hex[:8]}" for n, k in enumerate(KEYS)}) as u:
        yield u


@pytest.fixture
async def session(url: str) -> AsyncIterator[GraphmemSession]:
    async with GraphmemSession(f"chat {uuid.uuid4().hex[:8]}", url, KEYS[0]) as s:
        yield s


def said(items: list[Any]) -> list[Any]:
    return [i.get("content") for i in items]


class ScriptedModel(Model):
    """Answers each turn with the next scripted text and keeps the input it was given."""

    def __init__(self, answers: list[str]) -> None:
        self.answers = answers
        self.inputs: list[Any] = []

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kw: Any
    ) -> ModelResponse:
        self.inputs.append(input)
        text = ResponseOutputText(type="output_text", text=self.answers.pop(0), annotations=[])
        message = ResponseOutputMessage(
            id=f"msg_{uuid.uuid4().hex}",
            type="message",
            role="assistant",
            status="completed",
            content=[text],
        )
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kw: Any) -> Any:
        raise NotImplementedError


async def test_is_an_sdk_session_with_default_settings(session: GraphmemSession) -> None:
    assert isinstance(session, Session)
    assert isinstance(session.session_settings, SessionSettings)
    assert session.session_settings.limit is None
    assert session.graphmem_session == session_of(session.session_id)
    assert session.graphmem_session.startswith("oa.chat_20")


async def test_add_get_and_clear(session: GraphmemSession, url: str) -> None:
    items: list[Any] = [
        {"role": "user", "content": "Hello"},
        {"role": "assistant", "content": "Hi there!"},
    ]
    await session.add_items(items)
    assert await session.get_items() == items
    await session.add_items([])
    with Graphmem(url, KEYS[0]) as gm:
        stored = gm.memories(session_id=session.graphmem_session).items
    assert [m.content for m in stored] == ["Hello", "Hi there!"]
    assert [m.metadata["oaItem"] for m in stored] == items
    await session.clear_session()
    assert await session.get_items() == []
    with Graphmem(url, KEYS[0]) as gm:
        assert gm.memories(session_id=session.graphmem_session).items == []


async def test_history_keeps_its_order_across_tiers(session: GraphmemSession, url: str) -> None:
    items: list[Any] = [{"role": "user", "content": f"turn {n}"} for n in range(5)]
    for item in items:
        await session.add_items([item])
    with Graphmem(url, KEYS[0]) as gm:
        spilled = gm.spill(session.graphmem_session, count=3, tier="COLD")
    assert len(spilled.spilled_ids) == 3
    assert await session.get_items() == items
    assert await session.pop_item() == items[-1]
    await session.clear_session()
    assert await session.get_items() == []


async def test_pop_item_takes_the_newest(session: GraphmemSession) -> None:
    assert await session.pop_item() is None
    items: list[Any] = [
        {"role": "user", "content": "Hello"},
        {"role": "assistant", "content": "Hi there!"},
        {"role": "user", "content": "How are you?"},
    ]
    await session.add_items(items)
    assert await session.pop_item() == items[2]
    assert said(await session.get_items()) == ["Hello", "Hi there!"]
    assert await session.pop_item() == items[1]
    assert await session.pop_item() == items[0]
    assert await session.pop_item() is None
    assert await session.get_items() == []


async def test_concurrent_pops_never_return_one_item_twice(session: GraphmemSession) -> None:
    await session.add_items([{"role": "user", "content": f"m{i}"} for i in range(6)])
    popped = await asyncio.gather(*(session.pop_item() for _ in range(8)))
    got = [p["content"] for p in popped if p is not None]
    assert sorted(got) == [f"m{i}" for i in range(6)] and popped.count(None) == 2


async def test_sessions_are_separate(url: str) -> None:
    async with (
        GraphmemSession("session_1", url, KEYS[1]) as one,
        GraphmemSession("session_2", url, KEYS[1]) as two,
        GraphmemSession("session_1", url, KEYS[0]) as other_tenant,
    ):
        for s in (one, two, other_tenant):
            await s.clear_session()
        await one.add_items([{"role": "user", "content": "Session 1 message"}])
        await two.add_items(
            [
                {"role": "user", "content": "Session 2 message 1"},
                {"role": "user", "content": "Session 2 message 2"},
            ]
        )
        popped = await two.pop_item()
        assert popped is not None and popped.get("content") == "Session 2 message 2"
        assert said(await one.get_items()) == ["Session 1 message"]
        assert said(await two.get_items()) == ["Session 2 message 1"]
        assert await other_tenant.get_items() == []


async def test_get_items_with_limit_and_settings(url: str, session: GraphmemSession) -> None:
    items: list[Any] = [
        {"role": role, "content": f"{word} {n}"}
        for n in range(1, 4)
        for role, word in (("user", "Message"), ("assistant", "Response"))
    ]
    await session.add_items(items)
    assert said(await session.get_items()) == said(items)
    assert said(await session.get_items(limit=2)) == ["Message 3", "Response 3"]
    assert said(await session.get_items(limit=4)) == said(items[2:])
    assert await session.get_items(limit=10) == items
    assert await session.get_items(limit=0) == []
    assert await session.get_items(limit=-1) == items
    async with GraphmemSession(
        session.session_id, url, KEYS[0], session_settings=SessionSettings(limit=3)
    ) as limited:
        assert said(await limited.get_items()) == ["Response 2", "Message 3", "Response 3"]
        assert said(await limited.get_items(limit=1)) == ["Response 3"]
    async with GraphmemSession(
        session.session_id, url, KEYS[0], session_settings={"limit": 5}
    ) as s:
        assert s.session_settings is not None and s.session_settings.limit == 5


async def test_unicode_quotes_and_every_item_kind(session: GraphmemSession, url: str) -> None:
    items: list[Any] = [
        {"role": "user", "content": "こんにちは"},
        {"role": "assistant", "content": "😊👍"},
        {"role": "user", "content": "Robert'); DROP TABLE students;--"},
        {"role": "user", "content": '"MATCH (n) DETACH DELETE n" $tenant'},
        {
            "role": "user",
            "content": [{"type": "input_text", "text": "What's the weather in Paris?"}],
        },
        {
            "type": "function_call",
            "name": "get_weather",
            "arguments": '{"city": "Paris"}',
            "call_id": "c1",
        },
        {"type": "function_call_output", "call_id": "c1", "output": "18 degrees, sunny"},
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "Look it up"}],
        },
        {"type": "item_reference", "id": "msg_1"},
    ]
    await session.add_items(items)
    assert await session.get_items() == items
    with Graphmem(url, KEYS[0]) as gm:
        contents = [m.content for m in gm.memories(session_id=session.graphmem_session).items]
    assert contents[4:] == [
        "What's the weather in Paris?",
        'get_weather\n{"city": "Paris"}',
        "18 degrees, sunny",
        "Look it up",
        "item_reference",
    ]


async def test_concurrent_add_items_keep_each_call_together(session: GraphmemSession) -> None:
    calls = [[{"role": "user", "content": f"{who} {n}"} for n in range(20)] for who in ("a", "b")]
    await asyncio.gather(*(session.add_items(c) for c in calls))
    got = said(await session.get_items())
    assert sorted(got) == sorted(said(calls[0] + calls[1]))
    assert got in (said(calls[0] + calls[1]), said(calls[1] + calls[0]))
    # many small concurrent calls: all kept, none twice
    await session.clear_session()
    await asyncio.gather(
        *(session.add_items([{"role": "user", "content": f"Message {i}"}]) for i in range(10))
    )
    assert sorted(said(await session.get_items())) == sorted(f"Message {i}" for i in range(10))


async def test_an_item_too_large_is_refused_and_nothing_is_stored(session: GraphmemSession) -> None:
    await session.add_items([{"role": "user", "content": "before"}])
    big = [{"role": "user", "content": "fine"}, {"role": "assistant", "content": "x" * 20_001}]
    too_large = r"item 1: \d+ bytes of JSON; graphmem keeps at most 16384 bytes"
    with pytest.raises(ItemError, match=too_large):
        await session.add_items(big)  # type: ignore[arg-type]
    with pytest.raises(ItemError, match="item 0: must be a JSON object"):
        await session.add_items(["just text"])  # type: ignore[list-item]
    assert said(await session.get_items()) == ["before"]


async def test_a_batch_the_server_refuses_stores_nothing(url: str) -> None:
    # limits above graphmem's: the server's own check refuses the whole call
    async with GraphmemSession(
        f"s-{uuid.uuid4().hex[:8]}", url, KEYS[0], max_metadata_bytes=10**6, max_text_chars=10**6
    ) as session:
        from graphmem.client import BadInput

        with pytest.raises(BadInput, match="at most 20000"):
            await session.add_items(
                [{"role": "user", "content": "ok"}, {"role": "user", "content": "y" * 20_001}]
            )
        assert await session.get_items() == []


async def test_the_runner_keeps_history_in_graphmem(session: GraphmemSession) -> None:
    model = ScriptedModel(["San Francisco", "California", "Got it"])
    agent = Agent(name="test", model=model)
    config = RunConfig(tracing_disabled=True)
    first = await Runner.run(
        agent, "What city is the Golden Gate Bridge in?", session=session, run_config=config
    )
    assert first.final_output == "San Francisco"
    second = await Runner.run(agent, "What state is it in?", session=session, run_config=config)
    assert second.final_output == "California"
    seen = model.inputs[-1]
    assert seen[0].get("content") == "What city is the Golden Gate Bridge in?"
    assert seen[1]["content"][0]["text"] == "San Francisco"
    assert seen[-1].get("content") == "What state is it in?" and len(seen) == 3
    stored = await session.get_items()
    assert len(stored) == 4 and stored[1]["content"][0]["text"] == "San Francisco"
    # RunConfig's settings override the session's: only the last 2 history items
    limited = RunConfig(tracing_disabled=True, session_settings=SessionSettings(limit=2))
    await Runner.run(agent, "New question", session=session, run_config=limited)
    assert len(model.inputs[-1]) == 3
