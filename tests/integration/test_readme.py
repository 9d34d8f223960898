"""The README's examples, run as printed against a real `graphmem serve` process.

Only addresses are rewritten (the test stack's Bolt port and a free API port);
everything else — the dev key, the curl commands, the Bolt check — runs verbatim.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphmem.memory import RecallQuery
from tests.conftest import ROOT, Stack, stack_env, start_server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def readme_blocks() -> list[str]:
    return re.findall(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(), re.S)


async def clear_demo_session(stack: Stack) -> None:
    """The README works in tenant 'dev', session 'demo'; start that session empty so the
    examples' results are this run's (the test stack is the test's own)."""
    from graphmem.memory.builder import MemoryBuilder

    service = MemoryBuilder.from_settings(stack.settings()).build()
    try:
        hits = await service.recall.search(
            "dev", RecallQuery(session_id="demo", query="budget", limit=100)
        )
        for item in [h.item for h in hits] + await service.reports.hot_items("dev", "demo"):
            await service.erasure.forget("dev", item.id)
    finally:
        await service.close()


@pytest.fixture
def server(stack: Stack, tmp_path: Path) -> Iterator[tuple[int, dict[str, str]]]:
    asyncio.run(clear_demo_session(stack))
    port = free_port()
    env = stack_env(stack, GRAPHMEM_HOME=str(tmp_path / "home"), GRAPHMEM_PORT=str(port))
    proc = start_server(env, port)
    try:
        yield port, env
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def run_block(block: str, port: int, stack: Stack, env: dict[str, str]) -> str:
    script = block.replace("http://127.0.0.1:8000", f"http://127.0.0.1:{port}")
    script = script.replace("bolt://127.0.0.1:7687", stack.neo4j_uri)
    venv_bin = ROOT / ".venv" / "bin"
    if not (venv_bin / "graphmem").exists():  # tests run from another environment
        script = script.replace(".venv/bin/", str(Path(sys.executable).parent) + "/")
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_readme_curl_examples_add_spill_and_recall(
    server: tuple[int, dict[str, str]], stack: Stack
) -> None:
    port, env = server
    curl_block, bolt_block = readme_blocks()[1:3]
    assert curl_block.count("curl ") == 6
    lines = [json.loads(line) for line in run_block(curl_block, port, stack, env).splitlines()]
    assert all("errors" not in body for body in lines), lines
    added = lines[0]["data"]["addMemory"]
    assert added["tier"] == "HOT"
    assert added["id"] in {h["id"] for h in lines[1]["data"]["hot"]}
    spill = lines[2]["data"]["spill"]
    assert added["id"] in spill["spilledIds"]
    recall = lines[3]["data"]["recall"]
    assert added["id"] in [i["id"] for i in recall["items"]]
    assert recall["items"][0]["content"] == "The budget is $50K"
    status = lines[4]["data"]["memoryStatus"]
    assert status["hot"]["limit"] == 4000
    assert status["cold"]["items"] + status["warm"]["items"] >= 1
    assert lines[5]["data"]["search"][0]["item"]["content"] == "The budget is $50K"

    rows = run_block(bolt_block, port, stack, env)
    mine = [line for line in rows.splitlines() if added["id"] in line]
    assert len(mine) == 1
    assert "'dims': 384" in mine[0] and "'content': 'The budget is $50K'" in mine[0]


def test_readme_python_client_example(server: tuple[int, dict[str, str]], stack: Stack) -> None:
    port, env = server
    client_block = readme_blocks()[3]
    assert "from graphmem.client import Graphmem" in client_block
    assert run_block(client_block, port, stack, env).splitlines() == ["The budget is $50K"]
