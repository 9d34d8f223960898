"""`graphmem import` and `graphmem export` as processes against a real `graphmem serve`:
two LoCoMo dev conversations (read from ../shared/bench at run time, never copied here)
round-trip into another tenant with the same memories and the same search results, and
an import killed halfway and run again adds every record once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from graphmem.client import Graphmem, MemoryItem, ScoredMemory
from graphmem.transfer.sources import IMPORT_ID, records
from tests.conftest import ROOT, Stack, free_port, stack_env, start_server

LOCOMO = ROOT.parent / "shared" / "bench" / "locomo-dev.json"
KEYS = {name: f"tr-{name}-{uuid.uuid4().hex[:10]}" for name in ("source", "copy", "killed")}

pytestmark = pytest.mark.skipif(
    not LOCOMO.exists(), reason=f"LoCoMo dev split not at {LOCOMO} (CC BY-NC, not in the repo)"
)


@pytest.fixture(scope="module")
def url(stack: Stack) -> Iterator[str]:
    port = free_port()
    keys = ",".join(f"{k}=t-{n}-{uuid.uuid4().hex[:8]}" for n, k in KEYS.items())
    proc = start_server(stack_env(stack, GRAPHMEM_API_KEYS=keys), port)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def cli(url: str, key: str, *args: str) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMEM_")}
    return subprocess.Popen(
        [sys.executable, "-m", "graphmem.ops.cli", *args],
        cwd=ROOT,
        env=env | {"GRAPHMEM_URL": url, "GRAPHMEM_KEY": key},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def ok(proc: subprocess.Popen[bytes]) -> str:
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()[-3000:]
    return out.decode()


def everything(gm: Graphmem, user: str) -> list[MemoryItem]:
    items: list[MemoryItem] = []
    after: str | None = None
    while True:
        page = gm.memories(user_id=user, after=after)
        items += page.items
        if page.next is None:
            return items
        after = page.next


def comparable(path: Path) -> list[dict[str, Any]]:
    """Exported memories without their ids (graphmem chose them) and record times (when
    each graphmem learned them: the copy learned them at the import)."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    mine = ("id", "recordedAt")
    return [{k: v for k, v in m.items() if k not in mine} for m in lines if m["kind"] == "memory"]


def test_locomo_round_trip_into_another_tenant(url: str, tmp_path: Path) -> None:
    conversations = json.loads(LOCOMO.read_text())
    users = [c["sample_id"] for c in conversations]
    assert "imported" in ok(
        cli(url, KEYS["source"], "import", str(LOCOMO), "--quiet", "--wait", "0")
    )
    with Graphmem(url, KEYS["source"]) as gm:
        # every tier: a third of the sessions warm, a third cold, the rest hot
        for user in users:
            for n, session in enumerate(gm.sessions(user_id=user)):
                if n % 3 < 2:
                    ids = [m.id for m in gm.memories(session_id=session).items]
                    gm.spill(session, item_ids=ids, tier=("WARM", "COLD")[n % 3])
        source_items = {u: everything(gm, u) for u in users}
        owned = {u: tasks_of(gm, u) for u in users}
    for user in users:
        ok(cli(url, KEYS["source"], "export", "--user", user, "--out", str(tmp_path / user)))
        ok(cli(url, KEYS["copy"], "import", str(tmp_path / user), "--quiet", "--wait", "0"))
        ok(cli(url, KEYS["copy"], "export", "--user", user, "--out", str(tmp_path / "copy")))
        exported, copied = comparable(tmp_path / user), comparable(tmp_path / "copy")
        assert copied == exported
        assert {m["tier"] for m in exported} == {"HOT", "WARM", "COLD"}
        assert len(exported) == len(source_items[user])
        assert all(m["metadata"].get("dia_id") for m in exported)
        assert any(json.loads(line)["kind"] == "entity" for line in (tmp_path / user).open())
        tasks, copied_tasks = exported_tasks(tmp_path / user), exported_tasks(tmp_path / "copy")
        assert copied_tasks == tasks and len(tasks) == owned[user]
        # the same happenings, recorded again by the copy at its import
        source_times, copy_times = episode_times(tmp_path / user), episode_times(tmp_path / "copy")
        assert len(source_times) == 2 and [c for c, _ in copy_times] == [c for c, _ in source_times]
        assert all(r == c for c, r in source_times)
        assert all(datetime.fromisoformat(r) > datetime.fromisoformat(c) for c, r in copy_times)
    # The tasks came back whole: a rerun of the import skips them, and their episodes
    # are found and voted on in the copy as in the source.
    again = ok(cli(url, KEYS["copy"], "import", str(tmp_path / users[0]), "--quiet"))
    assert f"tasks: added 0, already there {owned[users[0]]}" in again
    with Graphmem(url, KEYS["source"]) as source, Graphmem(url, KEYS["copy"]) as copy:
        for conversation in conversations:
            user = conversation["sample_id"]
            for qa in conversation["qa"][:15]:
                want = found(source.search(qa["question"], user_id=user))
                got = found(copy.search(qa["question"], user_id=user))
                assert got == want, qa["question"]
        for question in ("deploy the nightly report", "migrate the billing table"):
            want_episodes = source.similar_episodes(question)
            got_episodes = copy.similar_episodes(question)
            assert [e.episode.outcome for e in got_episodes] == [
                e.episode.outcome for e in want_episodes
            ]
            assert [round(e.similarity, 4) for e in got_episodes] == [
                round(e.similarity, 4) for e in want_episodes
            ]


def tasks_of(gm: Graphmem, user: str) -> int:
    """Tasks the user owns in the source: one handed over to the user and worked on,
    one completed with two episodes; and a task of someone else, which stays behind.
    How many the user owns."""
    first = gm.create_task(f"deploy the nightly report for {user}", owner="pipeline")
    gm.add_step(first.id, "build", result="ok", owner="pipeline", generation=1)
    gm.transfer_task(first.id, user, 1, from_owner="pipeline", reason="review")
    gm.add_step(first.id, "review", status="FAILED", owner=user, generation=2)
    gm.add_step(first.id, "review again", owner=user, generation=2)
    second = gm.create_task(f"migrate the billing table of {user}", owner=user)
    for outcome, success in (("timed out on the lock", False), ("migrated", True)):
        gm.record_episode(
            outcome,
            success,
            task_id=second.id,
            lessons=[f"lesson after {outcome}"],
            metrics={"rows": 1200, "seconds": 3.5},
            mappings={"table": "billing"},
            signature="sig-migrate",
        )
    gm.complete_task(second.id, "completed")
    gm.create_task(f"someone else's task about {user}", owner="another-agent")
    return 2


def exported_tasks(path: Path) -> list[dict[str, Any]]:
    """Exported tasks without their import ids (the ids they had where they came from)
    and their episodes' record times (the copy learned of them at the import)."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    tasks = [
        {k: v for k, v in t.items() if k != "importId"}
        | {"episodes": [{k: v for k, v in e.items() if k != "recordedAt"} for e in t["episodes"]]}
        for t in lines
        if t["kind"] == "task"
    ]
    return sorted(tasks, key=lambda t: t["description"])


def episode_times(path: Path) -> list[tuple[str, str]]:
    """When each exported episode happened and was recorded."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    tasks = [t for t in lines if t["kind"] == "task"]
    return sorted((e["createdAt"], e["recordedAt"]) for t in tasks for e in t["episodes"])


def found(hits: list[ScoredMemory]) -> list[tuple[str, str, float]]:
    """The ranking as content, session and score (ids differ between the tenants)."""
    return [(h.item.content, h.item.session_id, round(h.score, 6)) for h in hits]


def test_an_import_killed_halfway_resumes_without_duplicates(url: str) -> None:
    total = sum(1 for _ in records(LOCOMO))
    proc = cli(url, KEYS["killed"], "import", str(LOCOMO), "--batch", "5", "--quiet", "--wait", "0")
    users = [c["sample_id"] for c in json.loads(LOCOMO.read_text())]
    with Graphmem(url, KEYS["killed"]) as gm:
        deadline = time.monotonic() + 120
        while len(gm.memories(user_id=users[0], first=100).items) < 60:
            assert proc.poll() is None and time.monotonic() < deadline, "import ended early"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        halfway = sum(len(everything(gm, u)) for u in users)
        assert 0 < halfway < total
        out = ok(cli(url, KEYS["killed"], "import", str(LOCOMO), "--quiet", "--wait", "0"))
        assert f"already there {halfway}" in out
        items = [m for u in users for m in everything(gm, u)]
    ids = [m.metadata[IMPORT_ID] for m in items]
    assert len(items) == total and len(set(ids)) == total
