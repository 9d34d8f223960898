"""The enrichment worker's CPU priority (graphmem/ops/commands/serving.py,
``lower_priority``): nice, a scheduler group of its own and SCHED_IDLE, so that requests
come first."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

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
