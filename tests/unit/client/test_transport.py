"""graphmem.client raises its own errors, never AttributeError, KeyError or
UnicodeEncodeError, for answers not shaped as GraphQL's and for input JSON cannot carry.
The server here is an httpx MockTransport: this is the client's own unit test;
tests/integration/test_client.py runs it against a real server."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from graphmem.client import (
    AsyncGraphmem,
    BadInput,
    Graphmem,
    Internal,
    NotFound,
    Retry,
    Unavailable,
)

Handler = Callable[[httpx.Request], httpx.Response]
ONCE = Retry(attempts=1)


def answering(status: int = 200, body: bytes | None = None, payload: Any = None) -> Handler:
    def handle(request: httpx.Request) -> httpx.Response:
        content = body if body is not None else json.dumps(payload).encode()
        return httpx.Response(status, content=content)

    return handle


def client(handler: Handler) -> Graphmem:
    http = httpx.Client(transport=httpx.MockTransport(handler))
    return Graphmem("http://graphmem.test", "key-for-tests", retry=ONCE, http=http)


MALFORMED = {
    "not-json": answering(body=b"<html>oops</html>"),
    "not-utf8": answering(body=b'{"data": "\xff"}'),
    "too-deep": answering(body=b"[" * 100_000 + b"]" * 100_000),
    "a-list": answering(payload=[1, 2]),
    "no-data": answering(payload={}),
    "data-null": answering(payload={"data": None}),
    "data-a-list": answering(payload={"data": [1]}),
    "field-missing": answering(payload={"data": {}}),
    "field-null": answering(payload={"data": {"addMemory": None}}),
    "field-a-list": answering(payload={"data": {"addMemory": []}}),
    "item-incomplete": answering(payload={"data": {"addMemory": {"id": "mem_1"}}}),
    "bad-time": answering(
        payload={
            "data": {
                "addMemory": {
                    "id": "m",
                    "sessionId": "s",
                    "content": "c",
                    "type": "FACT",
                    "tier": "HOT",
                    "accessCount": 0,
                    "tokenCount": 1,
                    "relevanceScore": 1.0,
                    "createdAt": "yesterday",
                }
            }
        }
    ),
    "errors-a-string": answering(payload={"errors": "boom"}),
    "errors-of-strings": answering(payload={"errors": ["boom"]}),
    "errors-an-object": answering(payload={"errors": {"message": "boom"}}),
    "extensions-a-list": answering(payload={"errors": [{"message": "m", "extensions": [1]}]}),
    "status-500": answering(status=500, body=b"Internal Server Error"),
}


@pytest.mark.parametrize("handler", MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_answer_is_internal(handler: Handler) -> None:
    with client(handler) as gm, pytest.raises(Internal) as raised:
        gm.add("s", "x")
    assert raised.value.code == "INTERNAL"


def test_a_typed_error_keeps_its_code() -> None:
    payload = {"errors": [{"message": "no task t", "extensions": {"code": "NOT_FOUND"}}]}
    with client(answering(payload=payload)) as gm, pytest.raises(NotFound):
        gm.task("t")


def test_a_gateway_without_a_graphql_answer_is_unavailable() -> None:
    with client(answering(status=503, body=b"busy")) as gm, pytest.raises(Unavailable):
        gm.status("s")


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda gm: gm.add("s", "\ud800"), "content"),
        (lambda gm: gm.add("s", "fine", metadata={"k": "a\udfffb"}), "metadata.k"),
        (lambda gm: gm.add("s", "fine", metadata={"n": float("nan")}), "metadata.n"),
        (lambda gm: gm.add("s", "fine", metadata={"n": float("inf")}), "metadata.n"),
        (lambda gm: gm.add("s", "fine", metadata={"when": object()}), "metadata.when"),
        (lambda gm: gm.add("s", "fine", metadata={"n": 10**5000}), "metadata.n"),
        (lambda gm: gm.add_many([{"sessionId": "s", "content": "\ud800"}]), "0.content"),
        (lambda gm: gm.search("\udc00"), "an argument"),
        (lambda gm: gm.execute('{ hot(sessionId: "\ud800") { id } }'), "query"),
    ],
    ids=["content", "metadata-key", "nan", "inf", "object", "huge-int", "batch", "query", "doc"],
)
def test_input_json_cannot_carry_is_bad_input_before_sending(
    call: Callable[[Graphmem], Any], field: str
) -> None:
    sent: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, json={"data": {}})

    with client(handle) as gm, pytest.raises(BadInput) as raised:
        call(gm)
    assert raised.value.extensions["field"] == field, raised.value
    assert raised.value.message.startswith(f"{field}: ")
    assert sent == []


def test_a_key_no_header_can_carry_is_bad_input() -> None:
    for key in ("clé-with-accent", "key\nwith-newline"):
        with pytest.raises(BadInput):
            Graphmem("http://graphmem.test", key)
        with pytest.raises(BadInput):
            AsyncGraphmem("http://graphmem.test", key)


def test_a_body_is_utf8_json() -> None:
    seen: list[Any] = []

    def handle(request: httpx.Request) -> httpx.Response:
        assert request.headers["content-type"] == "application/json"
        seen.append(json.loads(request.content))
        return httpx.Response(200, json={"data": {"forget": True}})

    with client(handle) as gm:
        assert gm.forget("mem_é")
    assert list(seen[0]["variables"].values()) == ["mem_é"]


async def test_the_async_client_raises_the_same() -> None:
    http = httpx.AsyncClient(transport=httpx.MockTransport(answering(body=b"not json")))
    async with AsyncGraphmem("http://graphmem.test", "key-for-tests", retry=ONCE, http=http) as gm:
        with pytest.raises(Internal):
            await gm.status("s")
        with pytest.raises(Internal):
            await gm.add("s", "x")
        with pytest.raises(BadInput):
            await gm.add("s", "\ud800")
