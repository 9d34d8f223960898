"""A body over the limit is read and dropped before the 413 (up to a bound), so the
client gets the answer: a server that hangs up while the client still sends makes the
client read a reset (bench/fuzz.py: 7 of 65 oversized bodies got no answer). A
Content-Length no integer can hold is too large, not a crash."""

from __future__ import annotations

from typing import Any

from graphmem.api.http.limits import BodyLimit

LIMIT = 1000


async def answered(body_chunks: list[bytes], declared: int | None) -> tuple[int, int, int]:
    """(status, chunks the server read, chunks left unread)."""
    left = list(body_chunks)
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        chunk = left.pop(0)
        return {"type": "http.request", "body": chunk, "more_body": bool(left)}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        raise AssertionError("an oversized body never reaches the app")

    headers = [(b"content-length", str(declared).encode())] if declared is not None else []
    scope = {"type": "http", "method": "POST", "path": "/graphql", "headers": headers}
    await BodyLimit(app, LIMIT)(scope, receive, send)
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    return status, len(body_chunks) - len(left), len(left)


async def test_a_declared_oversized_body_is_read_before_the_413() -> None:
    chunks = [b"x" * 500] * 4  # 2,000 bytes: twice the limit
    assert await answered(chunks, 2000) == (413, 4, 0)


async def test_an_undeclared_oversized_body_is_read_before_the_413() -> None:
    chunks = [b"x" * 500] * 6
    assert await answered(chunks, None) == (413, 6, 0)


async def test_a_body_far_over_the_limit_is_answered_at_once() -> None:
    chunks = [b"x" * 500] * 20  # 10,000 bytes: past four times the limit
    status, read, unread = await answered(chunks, 10_000)
    assert (status, read) == (413, 0) and unread == 20


async def test_a_content_length_of_thousands_of_digits_is_too_large_not_a_crash() -> None:
    import httpx

    from graphmem.api.http.app import create_app
    from graphmem.settings import Settings

    # No lifespan: the body limit answers before any service is asked.
    app = create_app(Settings(api_keys={"unit-edge-key-01": "t-unit"}))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://gm") as client:
        response = await client.post(
            "/graphql",
            content=b"{}",
            headers={"Content-Length": "9" * 5000, "Authorization": "Bearer unit-edge-key-01"},
        )
    assert response.status_code == 413
