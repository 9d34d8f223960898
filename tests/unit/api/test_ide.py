"""The IDE's routes without a browser: who gets the page, what it may load, what stays
behind the key. (tests/integration/test_ide.py drives a real browser.)"""

from __future__ import annotations

import httpx
import pytest

from graphmem.api import ide
from graphmem.api.http.app import create_app
from graphmem.settings import Settings

KEY = "unit-ide-key-01"


@pytest.fixture
def client() -> httpx.AsyncClient:
    # No lifespan: these routes need no service, so no Neo4j or Redis either.
    app = create_app(Settings(api_keys={KEY: "t-unit"}))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gm")


BROWSER = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}


async def test_a_browser_gets_the_page_without_a_key(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ide, "installed", lambda: True)
    response = await client.get("/graphql", headers=BROWSER)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert response.headers["content-security-policy"] == ide.CSP
    assert 'id="gm-key"' in response.text
    # every script the page loads is one of the server's own files
    assert 'src="/graphql/ide/ide.js"' in response.text
    assert "http" not in response.text


async def test_without_the_fetched_files_the_page_says_how_to_get_them(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ide, "installed", lambda: False)
    response = await client.get("/graphql", headers=BROWSER)
    assert response.status_code == 503
    assert "graphmem ide-assets" in response.text


def test_the_policy_allows_only_self() -> None:
    sources = {part.split()[0]: part.split()[1:] for part in ide.CSP.split("; ")}
    assert sources["default-src"] == ["'self'"]
    for directive, allowed in sources.items():
        assert set(allowed) <= {"'self'", "'none'"}, directive


@pytest.mark.parametrize(
    ("method", "headers"),
    [
        ("GET", {"Accept": "application/json"}),
        ("GET", {}),
        ("POST", BROWSER),
    ],
)
async def test_graphql_itself_still_needs_the_key(
    client: httpx.AsyncClient, method: str, headers: dict[str, str]
) -> None:
    response = await client.request(method, "/graphql", headers=headers, json={"query": "{x}"})
    assert response.status_code == 401
    assert response.json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"


async def test_the_ide_files_are_served_by_name_only(client: httpx.AsyncClient) -> None:
    script = await client.get("/graphql/ide/ide.js")
    assert script.status_code == 200
    assert script.headers["content-type"].startswith("text/javascript")
    assert script.headers["content-security-policy"] == ide.CSP
    for name in ("nope.js", "..%2Fassets.py", "%2E%2E%2F__init__.py", ".fetched"):
        assert (await client.get(f"/graphql/ide/{name}")).status_code == 404, name


def test_the_operations_guide_says_the_ide_is_served() -> None:
    """The operations guide agrees with the routes above: GraphiQL is served."""
    from tests.conftest import ROOT

    guide = (ROOT / "docs" / "operations.md").read_text()
    assert "not served" not in guide
    assert "/graphql/ide/" in guide and "graphmem ide-assets" in guide


async def test_a_graphql_get_with_the_key_is_refused_before_its_query_is_read(
    client: httpx.AsyncClient,
) -> None:
    """A GET takes no fair turn, so its query must not be parsed either (strawberry
    parses first and refuses the method after)."""
    from graphmem.api.graphql import guard

    document = "{ __typename } # " + "x" * 50_000
    parsed = guard.DocumentGuard.parse
    calls: list[str] = []

    async def counting(self: guard.DocumentGuard, text: str) -> object:
        calls.append(text)
        return await parsed(self, text)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(guard.DocumentGuard, "parse", counting)
        response = await client.get(
            "/graphql",
            params={"query": document},
            headers={"Accept": "application/json", "Authorization": f"Bearer {KEY}"},
        )
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert response.json()["errors"][0]["extensions"]["code"] == "BAD_INPUT"
    assert calls == []
