"""The GraphQL IDE (GraphiQL) that ``GET /graphql`` serves to a browser.

The page and its files load without a key: the key is typed into the page, and every
GraphQL request the page makes carries it. Everything comes from graphmem itself, which
the Content-Security-Policy holds the browser to.
"""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from graphmem.api.ide.assets import VENDOR, installed

STATIC = Path(__file__).resolve().parent / "static"
PREFIX = "/graphql/ide/"

CSP = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "font-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    ]
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}

#: by suffix, not from the host's mime.types: with nosniff, a wrong type breaks the page
MEDIA_TYPES = {
    ".js": "text/javascript",
    ".css": "text/css",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".woff": "font/woff",
    ".woff2": "font/woff2",
}

MISSING = """<!doctype html><html lang="en"><meta charset="utf-8"><title>graphmem</title>
<p>The GraphQL IDE's files are not installed on this server: run
<code>graphmem ide-assets</code> (it fetches them with npm), then reload.</p></html>"""


def wants_html(scope: Scope) -> bool:
    """A browser navigating to /graphql, not a GraphQL client (those ask for JSON)."""
    if scope["type"] != "http" or scope["method"] != "GET":
        return False
    accept = dict(scope.get("headers") or []).get(b"accept", b"")
    return b"text/html" in accept


def files() -> dict[str, Path]:
    """The IDE's files by the name they are served under."""
    found: dict[str, Path] = {}
    for directory in (VENDOR, STATIC):
        if directory.is_dir():
            found |= {p.name: p for p in directory.iterdir() if p.is_file() and p.name[0] != "."}
    return found


class IdeOrGraphQL:
    """``GET /graphql`` from a browser gets the IDE page; anything else goes on to the
    GraphQL app (behind its key check)."""

    def __init__(self, graphql: ASGIApp) -> None:
        self.graphql = graphql

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not wants_html(scope):
            await self.graphql(scope, receive, send)
            return
        if not installed():
            response: Response = HTMLResponse(MISSING, status_code=503, headers=HEADERS)
        else:
            page = (STATIC / "index.html").read_bytes()
            response = Response(page, media_type="text/html", headers=HEADERS)
            response.headers["Cache-Control"] = "no-store"
        await response(scope, receive, send)


async def asset(request: Request) -> Response:
    """One of the IDE's files by name; the set is read once per process, so no path
    from a request reaches the file system."""
    files: dict[str, Path] = request.app.state.ide_files
    path = files.get(request.path_params["name"])
    if path is None:
        return Response("not found", status_code=404, headers=HEADERS)
    media_type = MEDIA_TYPES.get(path.suffix, "application/octet-stream")
    response = Response(path.read_bytes(), media_type=media_type, headers=HEADERS)
    response.headers["Cache-Control"] = "public, max-age=3600"
    return response
