"""Request limits at the HTTP edge (ASGI middleware): body size and arrival, the life of
an event stream, the method GraphQL takes, and each tenant's turn at the process
(``fairshare``). Operation cost is in ``guard`` and ``admission``."""

from __future__ import annotations

import asyncio
import contextlib
import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graphmem import waits
from graphmem.api.graphql.errors import error_response
from graphmem.api.http.auth import TENANT_SCOPE_KEY
from graphmem.api.http.fairshare import FairShare
from graphmem.errors import ErrorCode, RateLimited

#: where BodyLimit leaves the body it read, for the middleware inside it
BODY_SCOPE_KEY = "graphmem.body"


def replaying(body: bytes, receive: Receive) -> Receive:
    """A receive that hands the app the body already read, then the real channel (for the
    disconnect)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


#: RFC 6455's close code for a message too big to process (uvicorn's ``ws_max_size`` too)
MESSAGE_TOO_BIG = 1009


class BodyLimit:
    """Reads at most ``max_bytes`` of a request body, within ``timeout`` seconds; larger
    requests get 413, slower ones 408 (a trickling body would hold a request open).
    Every WebSocket message has the same limit (``limit_messages``)."""

    #: a refused body up to this many times the limit is read (and dropped) before the
    #: 413, within ``drain_seconds``: a client still sending when the server hangs up
    #: gets a reset instead of the answer. A larger one is answered at once.
    drain_factor = 4
    drain_seconds = 2.0

    def __init__(self, app: ASGIApp, max_bytes: int, timeout: float = 30.0) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.timeout = timeout

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            await limit_messages(self.app, self.max_bytes, scope, receive, send)
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length", b"")
        # Length first: int() refuses more than 4,300 digits (a 500, not a 413).
        if declared.isdigit() and (len(declared) > 18 or int(declared) > self.max_bytes):
            if len(declared) <= 18 and int(declared) <= self.drain_factor * self.max_bytes:
                await self._drain(receive, int(declared))
            await self._reject(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        try:
            async with asyncio.timeout(self.timeout):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > self.max_bytes:
                        if message.get("more_body", False):
                            await self._drain(receive, self.drain_factor * self.max_bytes - size)
                        await self._reject(scope, receive, send)
                        return
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            response = error_response(
                408, f"request body not received within {self.timeout:g} s", ErrorCode.BAD_INPUT
            )
            # The unread rest of the body would be parsed as the next request; hang up.
            response.headers["connection"] = "close"
            await response(scope, receive, send)
            return
        body = b"".join(chunks)
        await self.app({**scope, BODY_SCOPE_KEY: body}, replaying(body, receive), send)

    async def _drain(self, receive: Receive, most: int) -> None:
        """Read and drop at most ``most`` more bytes of the body, for ``drain_seconds``."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.drain_seconds):
                while most > 0:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return
                    most -= len(message.get("body", b""))
                    if not message.get("more_body", False):
                        return

    async def _reject(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = error_response(
            413,
            f"request body larger than {self.max_bytes} bytes",
            ErrorCode.BAD_INPUT,
            maxBytes=self.max_bytes,
        )
        response.headers["connection"] = "close"
        await response(scope, receive, send)


def message_size(message: Message) -> int:
    """A WebSocket message's size in bytes, a text message's in UTF-8."""
    data = message.get("bytes")
    if data is not None:
        return len(data)
    return len((message.get("text") or "").encode("utf-8", "surrogatepass"))


async def limit_messages(
    app: ASGIApp, max_bytes: int, scope: Scope, receive: Receive, send: Send
) -> None:
    """Run a WebSocket app with every incoming message at most ``max_bytes``: a larger one
    closes the connection with 1009 before anything decodes it, and the app sees the
    client leave (what it sends after that is dropped)."""
    closed = False

    async def limited() -> Message:
        nonlocal closed
        message = await receive()
        if message["type"] == "websocket.receive" and message_size(message) > max_bytes:
            reason = f"message larger than {max_bytes} bytes"
            closed = True
            await send({"type": "websocket.close", "code": MESSAGE_TOO_BIG, "reason": reason})
            return {"type": "websocket.disconnect", "code": MESSAGE_TOO_BIG, "reason": reason}
        return message

    async def guarded(message: Message) -> None:
        if not closed:
            await send(message)

    await app(scope, limited, guarded)


class StreamLifetime:
    """Ends a long-lived GET response (the MCP event stream) after ``seconds``. The MCP
    transport lets a server close that stream at any time and clients reconnect; without
    an end, an idle client holds a socket for as long as it likes."""

    def __init__(self, app: ASGIApp, seconds: float) -> None:
        self.app = app
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "GET":
            await self.app(scope, receive, send)
            return
        started = finished = False

        async def tracked(message: Message) -> None:
            nonlocal started, finished
            if message["type"] == "http.response.start":
                started = True
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                finished = True
            await send(message)

        try:
            async with asyncio.timeout(self.seconds):
                await self.app(scope, receive, tracked)
        except TimeoutError:
            if started and not finished:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            elif not started:
                response = error_response(
                    408, "the stream's time is up; reconnect", ErrorCode.BAD_INPUT
                )
                await response(scope, receive, send)


class PostOnly:
    """GraphQL over HTTP is a POST (``allow_queries_via_get`` is off), but strawberry
    parses a GET's query before it refuses it, and a GET takes no fair turn: refused
    here, its query read by nobody. WebSockets (subscriptions) go on."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") == "POST":
            await self.app(scope, receive, send)
            return
        response = error_response(
            405, "GraphQL requests are POSTs (JSON body)", ErrorCode.BAD_INPUT
        )
        response.headers["Allow"] = "POST"
        await response(scope, receive, send)


class FairTurns:
    """Every POST takes a turn of its tenant's fair share of the process (``fairshare``)
    after its body is read (a trickling body holds no turn), then counts one unit
    against the tenant's cost per second, shared by every replica (invalid requests
    count too). The CPU time of all that runs from here, the wait and a refusal
    included, is the tenant's (``FairShare.metered``), and its deliberate waits share
    one allowance (``waits``). Long-lived GET streams and WebSockets take no turn. A
    refusal is answered when its retry is due, at most ``max_wait`` after the request
    arrived."""

    #: seconds a request may wait in all for work it leaves to others (``waits``: an
    #: explicit spill giving the enrichment worker time to finish), beside its turn
    wait_allowance = 1.0

    def __init__(self, app: ASGIApp, share: FairShare) -> None:
        self.app = app
        self.share = share

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        tenant = scope.get(TENANT_SCOPE_KEY)
        if scope["type"] != "http" or scope.get("method") != "POST" or not tenant:
            await self.app(scope, receive, send)
            return
        with self.share.metered(tenant), waits.allowance(self.wait_allowance):
            await self._take_turn(tenant, scope, receive, send)

    async def _take_turn(self, tenant: str, scope: Scope, receive: Receive, send: Send) -> None:
        entered = False
        arrived = time.monotonic()
        try:
            async with self.share.turn(tenant, len(scope.get(BODY_SCOPE_KEY, b""))):
                service = getattr(scope["app"].state, "service", None)
                if service is not None:
                    await service.admission.request(tenant)
                entered = True
                await self.app(scope, receive, send)
        except RateLimited as exc:
            if entered:
                raise
            response = error_response(429, exc.message, exc.code, **exc.details)
            retry_ms = exc.details.get("retryAfterMs")
            if isinstance(retry_ms, int):
                response.headers["retry-after"] = str(max(1, -(-retry_ms // 1000)))
                # A refusal is held (holding costs no CPU) until the retry is due, up to
                # the longest wait for a turn: answered at once, a client that does not
                # wait would turn refusals into a flood of their own.
                hold = min(retry_ms / 1000, self.share.limits.max_wait)
                await asyncio.sleep(max(0.0, hold - (time.monotonic() - arrived)))
            await response(scope, receive, send)
