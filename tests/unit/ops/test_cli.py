"""The command line: a configuration mistake is one line naming the setting, and a
non-zero exit, no traceback. The enrichment worker's CPU priority (``lower_priority``):
nice, a scheduler group of its own and SCHED_IDLE, so that requests come first."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, free_port


def graphmem(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    # A directory of its own: no graphmem.yaml, no dev key of the checkout, no GRAPHMEM_*.
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GRAPHMEM_", "NEO4J_"))}
    base.pop("REDIS_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "graphmem.ops.cli", *args],
        cwd=tmp_path,
        env=base | {"PYTHONPATH": str(ROOT), "GRAPHMEM_HOME": str(tmp_path / "home")} | env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    return lines[0]


@pytest.mark.parametrize(
    ("env", "names", "says"),
    [
        ({"GRAPHMEM_API_KEYS": "short=t-a"}, "GRAPHMEM_API_KEYS", "5 characters long"),
        ({"GRAPHMEM_API_KEYS": "long-enough-key"}, "GRAPHMEM_API_KEYS", "key=tenant"),
        ({"GRAPHMEM_API_KEYS": "long-enough-key=a:b"}, "GRAPHMEM_API_KEYS", "'a:b' must match"),
        ({"NEO4J_URI": "localhost:7687"}, "NEO4J_URI", "not a URL of scheme bolt"),
        ({"NEO4J_URI": "bolt://127.0.0.1:x"}, "NEO4J_URI", "port that is not a number"),
        ({"REDIS_URL": "http://127.0.0.1:6379"}, "REDIS_URL", "not a URL of scheme redis"),
        (
            {"GRAPHMEM_PORT": "eighty"},
            "GRAPHMEM_PORT",
            "a valid integer, unable to parse string as an integer (got 'eighty')",
        ),
        (
            {"GRAPHMEM_MEMORY__HOT_TOKEN_LIMIT": "3"},
            "GRAPHMEM_MEMORY__HOT_TOKEN_LIMIT",
            "greater than or equal to 16",
        ),
    ],
)
def test_a_bad_setting_is_one_line_naming_it(
    tmp_path: Path, env: dict[str, str], names: str, says: str
) -> None:
    line = one_line(graphmem(tmp_path, "serve", **env))
    assert line.startswith(f"graphmem: {names}: "), line
    assert says in line


def test_the_key_itself_is_not_in_the_message(tmp_path: Path) -> None:
    line = one_line(graphmem(tmp_path, "serve", GRAPHMEM_API_KEYS="abc1234=t-a"))
    assert "abc1234" not in line
    assert "7 characters long; keys need at least 8" in line


def test_serve_without_neo4j_says_which_url_and_what_to_do(tmp_path: Path) -> None:
    port = free_port()
    line = one_line(graphmem(tmp_path, "serve", NEO4J_URI=f"bolt://127.0.0.1:{port}"))
    assert f"nothing answers at NEO4J_URI bolt://127.0.0.1:{port}" in line
    assert "graphmem services up" in line


def test_a_missing_java_is_named_with_its_fix(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    line = one_line(graphmem(tmp_path, "services", "install", PATH=str(empty)))
    assert line.startswith("graphmem: java not found on PATH; install Java 17 or 21"), line


def test_doctor_lists_every_failure_and_exits_non_zero(tmp_path: Path) -> None:
    neo4j, redis = free_port(), free_port()
    result = graphmem(
        tmp_path,
        "doctor",
        NEO4J_URI=f"bolt://127.0.0.1:{neo4j}",
        REDIS_URL=f"redis://127.0.0.1:{redis}/0",
        PATH=str(Path(sys.executable).parent),
    )
    assert result.returncode == 1, result.stdout + result.stderr
    rows = {line.split()[1]: line for line in result.stdout.splitlines()[:-1]}
    assert rows["java"].startswith("FAIL") and "install Java 17 or 21" in rows["java"]
    assert (
        rows["neo4j"].startswith("FAIL") and f"NEO4J_URI bolt://127.0.0.1:{neo4j}" in rows["neo4j"]
    )
    assert (
        rows["redis"].startswith("FAIL")
        and f"REDIS_URL redis://127.0.0.1:{redis}/0" in rows["redis"]
    )
    for fine in ("spacy", "embedder", "keys"):
        assert rows[fine].startswith("ok"), rows[fine]
    assert result.stdout.splitlines()[-1] == "4 to fix"


PROBE = """
import json, os
from graphmem.ops.commands.serving import lower_priority
lower_priority(10, {idle})
print(json.dumps({{"policy": os.sched_getscheduler(0), "nice": os.nice(0),
                   "leader": os.getsid(0) == os.getpid()}}))
"""


def _probe(idle: bool) -> dict[str, int]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(idle=idle)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    result: dict[str, int] = json.loads(out.stdout)
    return result


@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="Linux scheduling classes")
def test_the_worker_runs_niced_in_a_session_of_its_own_under_sched_idle() -> None:
    got = _probe(True)
    assert got == {"policy": os.SCHED_IDLE, "nice": min(19, os.nice(0) + 10), "leader": True}


@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="Linux scheduling classes")
def test_without_the_idle_class_the_worker_is_only_niced() -> None:
    got = _probe(False)
    assert got == {"policy": os.SCHED_OTHER, "nice": min(19, os.nice(0) + 10), "leader": True}
