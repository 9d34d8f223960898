"""A minimal HTTP/1.1 keep-alive client for loopback load: one connection per client.

httpx spends about a millisecond of CPU per request, on the same two cores the server
needs; measured against a server answering in a few milliseconds, the client would be a
large part of what is measured. This client writes a prepared request and reads the
status line, headers and ``Content-Length`` body, nothing more.
"""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

#: what a request on a LoopbackClient may raise when the server is slow, gone or garbled
TRANSPORT_ERRORS = (
    TimeoutError,
    OSError,
    RuntimeError,
    ValueError,
    asyncio.IncompleteReadError,
    asyncio.LimitOverrunError,
)


def free_port() -> int:
    """A loopback port nothing listens on now (for a server the bench starts)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LoopbackClient:
    def __init__(self, host: str, port: int, path: str, headers: dict[str, str]) -> None:
        self.host, self.port, self.path = host, port, path
        self.headers = headers
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def __aenter__(self) -> LoopbackClient:
        self._reader, self._writer = await asyncio.open_connection(self.host, self.port)
        return self

    async def __aexit__(self, *_: object) -> None:
        if self._writer is not None:
            self._writer.close()
            await self._writer.wait_closed()

    async def post_json(self, payload: dict[str, Any]) -> tuple[int, bytes]:
        return await self.post_bytes(json.dumps(payload).encode())

    async def post_bytes(self, body: bytes) -> tuple[int, bytes]:
        """POST a body already encoded as JSON (a load that repeats bodies encodes each
        once)."""
        assert self._reader is not None and self._writer is not None
        head = "".join(f"{k}: {v}\r\n" for k, v in self.headers.items())
        self._writer.write(
            (
                f"POST {self.path} HTTP/1.1\r\nHost: {self.host}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n{head}\r\n"
            ).encode()
            + body
        )
        status_line = await self._reader.readuntil(b"\r\n")
        status = int(status_line.split()[1])
        length = 0
        while (line := await self._reader.readuntil(b"\r\n")) != b"\r\n":
            name, _, value = line.decode("latin-1").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value)
            elif name.strip().lower() == "transfer-encoding":
                raise RuntimeError("chunked responses are not supported by the load client")
        return status, await self._reader.readexactly(length)


def retry_after_ms(body: Any, default: int = 1000) -> int:
    """The ``retryAfterMs`` a GraphQL answer's errors name (the first), else ``default``."""
    for error in (body.get("errors") or []) if isinstance(body, dict) else []:
        value = (error.get("extensions") or {}).get("retryAfterMs")
        if isinstance(value, int | float) and value >= 0:
            return int(value)
    return default


def refused_for_now(body: Any) -> bool:
    """Whether a GraphQL answer only refuses the request for now: every error it has is
    RATE_LIMITED (the caller retries after ``retry_after_ms``)."""
    errors = (body.get("errors") or []) if isinstance(body, dict) else []
    return bool(errors) and all(
        isinstance(e, dict) and (e.get("extensions") or {}).get("code") == "RATE_LIMITED"
        for e in errors
    )
