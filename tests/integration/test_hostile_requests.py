"""Hostile requests against a real `graphmem serve` process: none may stall the others."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.conftest import Stack, free_port, stack_env, start_server
from tests.support.documents import fragment_bomb

KEY = "hardening-key-0001"


@pytest.fixture(scope="module")
def server(stack: Stack) -> Iterator[str]:
    port = free_port()
    env = stack_env(
        stack,
        GRAPHMEM_API_KEYS=f"{KEY}=t-hardening",
        GRAPHMEM_HEADER_TIMEOUT_SECONDS="1",
        GRAPHMEM_BODY_TIMEOUT_SECONDS="1",
        GRAPHMEM_MCP_STREAM_SECONDS="2",
    )
    proc = start_server(env, port)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


async def test_fragment_bomb_is_refused_at_once_and_healthz_answers_throughout(
    server: str,
) -> None:
    headers = {"Authorization": f"Bearer {KEY}"}
    stop = asyncio.Event()
    health_latencies: list[float] = []

    async with httpx.AsyncClient(base_url=server, timeout=5) as client:

        async def watch_health() -> None:
            while not stop.is_set():
                started = time.perf_counter()
                response = await client.get("/healthz")
                assert response.status_code == 200
                health_latencies.append(time.perf_counter() - started)
                await asyncio.sleep(0.01)

        watcher = asyncio.create_task(watch_health())
        bomb_latencies = []
        for levels in (20, 30, 60):
            for _ in range(3):
                started = time.perf_counter()
                response = await client.post(
                    "/graphql", json={"query": fragment_bomb(levels)}, headers=headers
                )
                bomb_latencies.append(time.perf_counter() - started)
                body = response.json()
                assert body["data"] is None
                assert body["errors"][0]["extensions"]["code"] == "BAD_INPUT"
                assert "more than 500 fields" in body["errors"][0]["message"]
        # the same shape within the limits still runs
        small = await client.post("/graphql", json={"query": fragment_bomb(4)}, headers=headers)
        assert small.json() == {"data": {"__typename": "Query"}}
        stop.set()
        await watcher

    assert statistics.median(bomb_latencies) < 0.1, bomb_latencies
    assert health_latencies
    assert max(health_latencies) < 1.0, max(health_latencies)


async def test_oversized_document_is_refused_before_parsing(server: str) -> None:
    query = '{ __type(name: "' + "x" * 150_000 + '") { name } }'
    async with httpx.AsyncClient(base_url=server, timeout=5) as client:
        response = await client.post(
            "/graphql", json={"query": query}, headers={"Authorization": f"Bearer {KEY}"}
        )
    body = response.json()
    assert body["errors"][0]["extensions"]["code"] == "BAD_INPUT"
    assert "longer than 100000 characters" in body["errors"][0]["message"]


async def _closed_within(server: str, payload: bytes, seconds: float) -> tuple[float, bytes]:
    """Send ``payload`` and stall; how long until the server has answered and hung up."""
    host, port = server.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    started = time.perf_counter()
    try:
        if payload:
            writer.write(payload)
            await writer.drain()
        # Until the server hangs up: an answer's head and body may come in separate packets.
        answer = await asyncio.wait_for(reader.read(), seconds)
    finally:
        writer.close()
    return time.perf_counter() - started, answer


@pytest.mark.parametrize(
    "payload",
    [b"", b"POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty"],
    ids=["silent", "slow-headers"],
)
async def test_connections_that_never_finish_their_headers_are_closed(
    server: str, payload: bytes
) -> None:
    elapsed, answer = await _closed_within(server, payload, seconds=10)
    assert answer == b""  # closed, nothing sent
    assert elapsed < 5


async def test_a_body_that_never_arrives_gets_408(server: str) -> None:
    head = (
        f"POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {KEY}\r\n"
        'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"query":'
    ).encode()
    elapsed, answer = await _closed_within(server, head, seconds=10)
    assert answer.startswith(b"HTTP/1.1 408"), answer[:80]
    assert b"BAD_INPUT" in answer
    assert elapsed < 5


async def test_the_mcp_event_stream_ends_by_itself(server: str) -> None:
    headers = {"Authorization": f"Bearer {KEY}", "Accept": "text/event-stream"}
    async with httpx.AsyncClient(base_url=server, timeout=20) as client:
        for _ in range(2):  # ends by itself, and the client may open it again
            started = time.perf_counter()
            async with client.stream("GET", "/mcp", headers=headers) as stream:
                async for _chunk in stream.aiter_bytes():
                    pass
            assert 1.5 < time.perf_counter() - started < 10  # held open until the cap
