"""`graphmem import` as a process against a real server: a bad line is
skipped with its number and the server's reason while the rest are imported, ids are
imported once however often they appear or the import runs, and the exit code says
whether anything could be imported."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from graphmem.transfer.sources import IMPORT_ID
from tests.conftest import ROOT, LiveApi

MEMORIES = "query($s: ID!) { memories(sessionId: $s) { items { content metadata } } }"


async def graphmem_import(live_api: LiveApi, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMEM_")}
    env |= {"GRAPHMEM_URL": live_api.url, "GRAPHMEM_KEY": next(iter(live_api.keys.values()))}
    command = [sys.executable, "-m", "graphmem.ops.cli", "import", *args, "--quiet", "--wait", "0"]
    # in a thread: the server answers on this test's event loop
    return await asyncio.to_thread(
        subprocess.run, command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def line(**fields: Any) -> str:
    return json.dumps(fields)


async def test_bad_lines_are_skipped_and_the_rest_imported_once(
    live_api: LiveApi, tmp_path: Path
) -> None:
    path = tmp_path / "memories.jsonl"
    path.write_text(
        "\n".join(
            [
                line(kind="memory", id="m1", sessionId="imp", content="the first memory"),
                line(kind="memory", id="m2", sessionId="imp", content="the second memory"),
                '{"kind": "memory", "id": "m3", "sessionId": "imp", "content": ',
                line(
                    kind="memory",
                    id="m4",
                    sessionId="imp",
                    content="a time Neo4j cannot hold",
                    occurredAt="2024-01-01T00:00:00+23:59",
                ),
                line(kind="memory", id="m5", sessionId="not a session id", content="x"),
                line(kind="memory", id="m1", sessionId="imp", content="the first memory"),
                line(kind="memory", id="m6", sessionId="imp", content="the last memory"),
            ]
        )
        + "\n"
    )
    done = await graphmem_import(live_api, str(path), "--batch", "2")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "imported 3, already there 1, skipped 3" in done.stdout, done.stdout
    assert "line 3: skipped: not JSON" in done.stderr
    assert "line 4: skipped: occurredAt: the time zone offset" in done.stderr, done.stderr
    assert "line 5: skipped: sessionId" in done.stderr, done.stderr
    items = (await live_api.gql(MEMORIES, {"s": "imp"}))["memories"]["items"]
    assert sorted(i["metadata"][IMPORT_ID] for i in items) == [
        "memory:m1",
        "memory:m2",
        "memory:m6",
    ]

    again = await graphmem_import(live_api, str(path))
    assert again.returncode == 0, again.stderr
    assert "imported 0, already there 4, skipped 3" in again.stdout, again.stdout
    assert len((await live_api.gql(MEMORIES, {"s": "imp"}))["memories"]["items"]) == 3

    strict = await graphmem_import(live_api, str(path), "--strict")
    assert strict.returncode == 1


async def test_exit_codes_when_nothing_can_be_imported(live_api: LiveApi, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n" + line(sessionId="no way", content="x") + "\n")
    done = await graphmem_import(live_api, str(bad))
    assert done.returncode == 1 and "imported 0, already there 0, skipped 2" in done.stdout
    missing = await graphmem_import(live_api, str(tmp_path / "nowhere.jsonl"))
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert "cannot read" in missing.stderr
