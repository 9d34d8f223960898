"""How uvicorn serves the app: the HTTP protocol with a deadline for request headers,
and the connection settings that keep slow or silent clients from holding sockets.

uvicorn times out idle keep-alive connections but not a request whose headers trickle
in (a slowloris client holds a socket, and a file descriptor, for as long as it likes).
Here the headers of every request must be complete within ``header_timeout`` seconds of
its first byte (or of the connection's start); the body has its own deadline in
``limits.BodyLimit``; WebSockets are pinged so half-open ones are closed, and their
messages have the body's size limit.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from graphmem.settings import Settings


class HeaderDeadlineProtocol(HttpToolsProtocol):
    header_timeout = 10.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm()

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        if self._header_deadline is None:
            self._header_deadline = self.loop.call_later(self.header_timeout, self._expired)

    def _disarm(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _expired(self) -> None:
        self._header_deadline = None
        if self.cycle is None or self.cycle.response_complete:
            if not self.transport.is_closing():
                self.transport.close()


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    """The keyword arguments graphmem passes to uvicorn, wherever it starts one."""
    HeaderDeadlineProtocol.header_timeout = settings.header_timeout_seconds
    return {
        "host": settings.host,
        "port": settings.port,
        "http": HeaderDeadlineProtocol,
        "timeout_keep_alive": 5,
        # a WebSocket whose peer vanished answers no ping: closed within ~2 intervals
        "ws_ping_interval": 10.0,
        "ws_ping_timeout": 10.0,
        # uvicorn stops reading a WebSocket message past this size (close 1009), before
        # it is buffered whole; limits.BodyLimit checks each message again in the app.
        # A client's messages wait in a queue of ws_max_queue before the app reads them:
        # a connection buffers at most that many times the limit.
        "ws_max_size": settings.max_body_bytes,
        "ws_max_queue": 4,
        "log_level": "info",
        "access_log": False,
    }
