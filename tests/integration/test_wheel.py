"""graphmem as a user gets it from a package index: the wheel installed into a fresh
virtualenv outside this checkout (its dependencies from PyPI, or pip's cache), then, from
an empty folder, `graphmem services install` and `services up` (Neo4j and Redis of its
own, on free ports), `graphmem serve`, and one add and search over HTTP. Nothing of the
checkout is on the path: a file the wheel misses fails here."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import ROOT, free_port
from tests.support.wheel import build_wheel

PASSWORD = "wheel-smoke-pw"


def run(cmd: list[str], env: dict[str, str], cwd: Path, timeout: float) -> str:
    done = subprocess.run(
        cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, (
        f"{' '.join(cmd)} exited {done.returncode}:\n" + (done.stdout + done.stderr)[-4000:]
    )
    return done.stdout


@pytest.fixture
def installed(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str], Path]]:
    """A virtualenv holding the wheel, an empty working folder, and the environment of a
    user with ports of their own (no GRAPHMEM_*, NEO4J_* or REDIS_* of the suite's)."""
    wheel = build_wheel(tmp_path / "build")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GRAPHMEM_", "NEO4J_", "REDIS_", "PYTHON", "VIRTUAL_ENV"))
    }
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    run([str(venv / "bin" / "pip"), "install", "-q", str(wheel)], env, tmp_path, 900)
    work = tmp_path / "work"
    work.mkdir()
    env |= {
        "GRAPHMEM_NEO4J_BOLT_PORT": str(free_port()),
        "GRAPHMEM_NEO4J_HTTP_PORT": str(free_port()),
        "GRAPHMEM_REDIS_PORT": str(free_port()),
        "NEO4J_PASSWORD": PASSWORD,
        # spaCy comes with the `nlp` extra; the base install runs without entities
        "GRAPHMEM_ENTITIES_ENABLED": "false",
    }
    try:
        yield venv / "bin" / "graphmem", env, work
    finally:
        subprocess.run(
            [str(venv / "bin" / "graphmem"), "services", "down"],
            env=env,
            cwd=work,
            capture_output=True,
            timeout=120,
            check=False,
        )


def test_the_wheel_installs_starts_its_stack_serves_and_answers(
    installed: tuple[Path, dict[str, str], Path],
) -> None:
    graphmem, env, work = installed
    where = run(
        [str(graphmem.parent / "python"), "-c", "import graphmem; print(graphmem.__file__)"],
        env,
        work,
        60,
    )
    assert not where.strip().startswith(str(ROOT)), where
    run([str(graphmem), "services", "install"], env, work, 600)
    run([str(graphmem), "services", "up"], env, work, 300)
    key = (work / ".graphmem" / "dev-api-key").read_text().strip()

    port = free_port()
    server = subprocess.Popen(
        [str(graphmem), "serve"],
        env=env | {"GRAPHMEM_PORT": str(port)},
        cwd=work,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None, server.stdout.read().decode() if server.stdout else ""
            try:
                if httpx.get(f"{url}/readyz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "graphmem serve did not become ready"
            time.sleep(0.3)

        headers = {"Authorization": f"Bearer {key}"}

        def gql(query: str, variables: dict[str, object]) -> dict[str, object]:
            response = httpx.post(
                f"{url}/graphql",
                json={"query": query, "variables": variables},
                headers=headers,
                timeout=60,
            )
            body = response.json()
            assert "errors" not in body, body
            data: dict[str, object] = body["data"]
            return data

        added = gql(
            "mutation($s: ID!, $c: String!) { addMemory(input: {sessionId: $s, content: $c,"
            " type: FACT}) { id } }",
            {"s": "wheel-smoke", "c": "The lighthouse keeper feeds the gulls at dawn."},
        )
        memory_id = added["addMemory"]["id"]  # type: ignore[index]
        gql("mutation($s: ID!) { spill(sessionId: $s) { spilledCount } }", {"s": "wheel-smoke"})
        found = gql(
            'query($q: String!) { search(query: $q, sessionId: "wheel-smoke", limit: 3)'
            " { item { id content } } }",
            {"q": "who feeds the seabirds in the morning"},
        )
        ids = [hit["item"]["id"] for hit in found["search"]]  # type: ignore[attr-defined]
        assert memory_id in ids, found
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
