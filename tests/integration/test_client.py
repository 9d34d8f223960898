"""graphmem.client against a real `graphmem serve`: every method, an error of every
code, the retries, and the change feed over graphql-transport-ws."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator

import httpx
import pytest

from graphmem.client import (
    AsyncGraphmem,
    BadInput,
    Event,
    Forbidden,
    Graphmem,
    NotFound,
    QuotaExceeded,
    RateLimited,
    Retry,
    Unauthenticated,
    Unavailable,
    memory,
)
from tests.conftest import Stack, free_port, stack_env, start_server

KEY, RATE_KEY, QUOTA_KEY = "client-key-0001", "client-rate-0001", "client-quota-0001"


@pytest.fixture(scope="module")
def url(stack: Stack) -> Iterator[str]:
    port = free_port()
    proc = start_server(stack_env(stack, GRAPHMEM_API_KEYS=f"{KEY}=t-client"), port)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def strict_url(stack: Stack) -> Iterator[str]:
    """A server with a low rate limit and a one-memory quota, each tenant its own."""
    port = free_port()
    tenants = f"{RATE_KEY}=t-rate-{uuid.uuid4().hex[:6]},{QUOTA_KEY}=t-quota-{uuid.uuid4().hex[:6]}"
    env = stack_env(
        stack,
        GRAPHMEM_API_KEYS=tenants,
        GRAPHMEM_RATE_LIMIT_PER_SECOND="3",
        GRAPHMEM_QUOTA_MEMORIES="1",
    )
    proc = start_server(env, port)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture
def gm(url: str) -> Iterator[Graphmem]:
    with Graphmem(url, KEY) as client:
        yield client


def session() -> str:
    return f"s-{uuid.uuid4().hex[:10]}"


def test_add_spill_recall_search_status_forget(gm: Graphmem) -> None:
    sid, user = session(), f"u-{uuid.uuid4().hex[:8]}"
    item = gm.add(sid, "The budget is $50K", type="FACT", user_id=user, metadata={"k": "v"})
    assert (item.session_id, item.tier, item.type, item.metadata) == (
        sid,
        "HOT",
        "FACT",
        {"k": "v"},
    )
    more = gm.add_many([memory(sid, "Kickoff is on Monday", user_id=user), memory(sid, "hi")])
    assert [m.content for m in more] == ["Kickoff is on Monday", "hi"]

    before = gm.status(sid)
    assert before.hot.items == 3 and before.hot_limit == 4000

    spilled = gm.spill(sid, item_ids=[item.id])
    assert spilled.spilled_ids == [item.id]
    assert gm.status(sid).hot.items == 2

    found = gm.search("money", user_id=user, limit=5)
    assert found and found[0].item.id == item.id and found[0].score > 0
    recalled = gm.recall("what was the budget?", session_id=sid, auto_promote=False)
    assert recalled.items[0].id == item.id
    assert recalled.scores[item.id] > 0

    assert gm.forget(item.id) is True
    assert item.id not in {s.item.id for s in gm.search("budget", session_id=sid)}


def test_entities_of_a_user(gm: Graphmem) -> None:
    sid, user = session(), f"u-{uuid.uuid4().hex[:8]}"
    gm.add(sid, "Ada Lovelace met Charles Babbage in London.", user_id=user)
    gm.spill(sid, count=1)
    names = {e.name: e for e in gm.entities(user)}
    assert {"Ada Lovelace", "Charles Babbage", "London"} <= set(names), names
    people = gm.entities(user, type="PERSON")
    assert {e.name for e in people} == {"Ada Lovelace", "Charles Babbage"}
    assert all(e.count == 1 for e in people)


def test_tasks_and_steps(gm: Graphmem) -> None:
    task = gm.create_task("ship the report", owner="planner")
    assert (task.owner, task.steps) == ("planner", [])
    first = gm.add_step(
        task.id, "draft", result="done", owner="planner", generation=task.generation
    )
    second = gm.add_step(
        task.id, "review", status="FAILED", owner="planner", generation=task.generation
    )
    assert (first.result, first.status, second.status) == ("done", "SUCCEEDED", "FAILED")
    assert first.order < second.order
    read = gm.task(task.id)
    assert [s.action for s in read.steps] == ["draft", "review"]
    done = gm.complete_task(task.id, "failed")
    assert done.status == "failed"
    reviewer = f"reviewer-{uuid.uuid4().hex[:8]}"
    handle = gm.transfer_task(task.id, reviewer, task.generation, from_owner="planner")
    assert (handle.owner, handle.generation) == (reviewer, task.generation + 1)
    with pytest.raises(Forbidden):  # the old handle is stale now
        gm.transfer_task(task.id, "planner", task.generation, from_owner="planner")
    episode = gm.record_episode(
        "shipped late",
        False,
        task_id=task.id,
        lessons=["start the review earlier"],
        metrics={"days": 3},
        mappings={"format": "pdf"},
        signature="sig-report",
    )
    assert (episode.task_id, episode.metrics, episode.mappings) == (
        task.id,
        {"days": 3},
        {"format": "pdf"},
    )
    (best, *_) = gm.similar_episodes("shipping the report", signature="sig-report")
    assert best.episode.id == episode.id and best.similarity > 0.6  # the signature boost
    (exported,) = gm.owned_tasks(reviewer).items
    assert [s["action"] for s in exported["steps"]] == ["draft", "review"]
    assert exported["episodes"][0]["outcome"] == "shipped late"
    copy = gm.import_task({**exported, "importId": f"copy-of-{task.id}"})
    assert copy.created and copy.task.id != task.id
    assert [s.action for s in copy.task.steps] == ["draft", "review"]
    assert not gm.import_task({**exported, "importId": f"copy-of-{task.id}"}).created
    with pytest.raises(BadInput):
        gm.import_task({**exported, "importId": "bad-generation", "generation": 0})


def test_an_error_of_each_code_is_raised_as_its_exception(gm: Graphmem, url: str) -> None:
    with pytest.raises(BadInput) as bad:
        gm.add("not:a:session", "x")
    assert bad.value.code == "BAD_INPUT" and "sessionId" in bad.value.message

    with Graphmem(url, "no-such-key-000") as stranger, pytest.raises(Unauthenticated) as who:
        stranger.status("s")
    assert who.value.code == "UNAUTHENTICATED"

    task = gm.create_task("owned", owner="alice")
    with pytest.raises(Forbidden) as stale:
        gm.add_step(task.id, "sneak", owner="mallory", generation=task.generation)
    assert stale.value.code == "FORBIDDEN"

    with pytest.raises(NotFound) as missing:
        gm.task(f"no-such-task-{uuid.uuid4().hex}")
    assert missing.value.code == "NOT_FOUND"


def test_rate_limit_and_quota(strict_url: str) -> None:
    with Graphmem(strict_url, RATE_KEY) as rated, pytest.raises(RateLimited) as limited:
        for _ in range(20):
            rated.status("s")
    assert limited.value.code == "RATE_LIMITED"
    assert limited.value.retry_after is not None and limited.value.retry_after > 0

    with Graphmem(strict_url, QUOTA_KEY) as capped:
        capped.add("s", "the one memory this tenant may keep")
        with pytest.raises(QuotaExceeded) as full:
            capped.add("s", "one too many")
    assert full.value.code == "QUOTA_EXCEEDED"


def test_unavailable_is_retried_with_backoff_then_raised() -> None:
    attempts: list[float] = []
    http = httpx.Client(event_hooks={"request": [lambda _r: attempts.append(time.monotonic())]})
    retry = Retry(attempts=3, first_delay=0.1, max_delay=0.1)
    dead = f"http://127.0.0.1:{free_port()}"
    with Graphmem(dead, KEY, retry=retry, http=http) as gm, pytest.raises(Unavailable) as down:
        gm.status("s")
    assert down.value.code == "UNAVAILABLE"
    assert len(attempts) == 3


async def test_the_async_client_and_the_change_feed(url: str) -> None:
    sid = session()
    async with AsyncGraphmem(url, KEY) as gm:
        seen: list[Event] = []

        async def listen() -> None:
            async for event in gm.events(kinds=["ADDED"], session_id=sid):
                seen.append(event)
                return

        listener = asyncio.create_task(listen())
        added = []
        # The subscription is in place some time after the handshake: add until seen.
        deadline = time.monotonic() + 15
        while not listener.done() and time.monotonic() < deadline:
            added.append((await gm.add(sid, f"event {len(added)}")).id)
            await asyncio.wait({listener}, timeout=0.3)
        await listener
        assert seen[0].kind == "ADDED" and seen[0].session_id == sid
        assert set(seen[0].item_ids) <= set(added)
        status = await gm.status(sid)
        assert status.hot.items == len(added)


async def test_the_change_feed_refuses_an_unknown_key(url: str) -> None:
    async with AsyncGraphmem(url, "no-such-key-000") as gm:
        with pytest.raises(Unauthenticated):
            async for _ in gm.events():
                pass
