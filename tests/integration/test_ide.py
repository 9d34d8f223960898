"""The GraphQL IDE in a real browser (Debian's chromium, headless) against a real
`graphmem serve`: it loads without a key, runs a query once the key is entered, browses
the schema, and asks nothing of any host but this server."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import ConsoleMessage, expect, sync_playwright

from tests.conftest import Stack, free_port, stack_env, start_server

KEY = "ide-test-key-0001"


@pytest.fixture(scope="module")
def server(stack: Stack) -> Iterator[str]:
    port = free_port()
    proc = start_server(stack_env(stack, GRAPHMEM_API_KEYS=f"{KEY}=t-ide"), port)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def chromium() -> str:
    path = shutil.which("chromium")
    assert path, "Debian's chromium is missing: ./dev test installs it (apt-get install chromium)"
    return path


def test_the_ide_runs_a_query_with_the_key_typed_into_it(server: str, tmp_path: Path) -> None:
    httpx.post(
        f"{server}/graphql",
        json={
            "query": 'mutation { addMemory(input: {sessionId: "demo", content: "The budget'
            ' is $50K", type: FACT}) { id } }'
        },
        headers={"Authorization": f"Bearer {KEY}"},
    ).raise_for_status()
    requested: list[str] = []
    refused: list[str] = []

    def console(message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text:
            refused.append(message.text)

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 780})
            page.on("request", lambda request: requested.append(request.url))
            page.on("console", console)
            loaded = page.goto(f"{server}/graphql")
            assert loaded is not None and loaded.status == 200
            assert "default-src 'self'" in loaded.headers["content-security-policy"]
            # The schema request the IDE makes on load has no key yet: refused.
            expect(page.locator("#gm-status")).to_have_text("enter an API key")

            page.fill("#gm-key", KEY)
            page.press("#gm-key", "Enter")
            expect(page.locator("#gm-status")).to_have_text("key accepted")
            page.click(".graphiql-execute-button")
            result = page.locator(".result-window")
            expect(result).to_contain_text('"memoryStatus"', timeout=20_000)
            # the memory added above (and any from earlier runs on this stack)
            expect(result).to_contain_text(re.compile(r'"hot": \{\s*"items": [1-9]'))

            page.click("[aria-label='Show Documentation Explorer']")
            docs = page.locator(".graphiql-doc-explorer")
            expect(docs).to_contain_text("mutation: Mutation")
            docs.get_by_text("Query", exact=True).click()
            expect(docs).to_contain_text("memoryStatus")

            shot = Path(os.environ.get("GRAPHMEM_IDE_SCREENSHOT") or tmp_path / "ide.png")
            page.screenshot(path=str(shot))
            assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        finally:
            browser.close()

    assert refused == []
    assert any(url.endswith("/graphql/ide/graphiql.min.js") for url in requested)
    outside = [url for url in requested if not url.startswith(f"{server}/")]
    assert outside == [], outside


def test_every_graphql_request_still_needs_the_key(server: str) -> None:
    for request in (
        httpx.post(f"{server}/graphql", json={"query": "{ __typename }"}),
        httpx.get(f"{server}/graphql", headers={"Accept": "application/json"}),
    ):
        assert request.status_code == 401
        assert request.json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
