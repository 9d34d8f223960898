"""bench/peer.py runs end to end on its tiny input, so it cannot rot.

The peer benchmark starts its own Neo4j (graphmem's launcher, own ports and data) and its
own virtualenv (created on demand: the first run on a machine installs the peer with pip),
so it needs no fixture. Smoke only: nothing here asserts a speed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT


@pytest.mark.timeout(900)
def test_peer_bench_smoke(tmp_path: Path) -> None:
    out = tmp_path / "peer.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench.peer", "--quick", "--out", str(out)],
        cwd=ROOT,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["quick"] is True
    assert result["peer"]["versions"]["neo4j_agent_memory"] == "0.8.0"
    assert result["peer"]["pipeline"]["llm"] is None
    assert result["peer"]["pipeline"]["extractor"] == "SpacyEntityExtractor"
    assert result["embedding_parity"]["max_abs_diff"] < 1e-4
    assert result["ingest"]["messages"] > 0
    assert result["ingest"]["messages_per_s"] > 0
    assert result["ingest_single"]["messages_per_s"] > 0
    assert result["ingest"]["graph"]["entities"] > 0
    assert result["search"]["queries"] > 0
    assert 0 < result["search"]["p50_ms"] <= result["search"]["p95_ms"]
    recall = result["recall"]
    assert recall["questions"] > 0
    assert 0.0 <= recall["r5"] <= recall["r10"] <= 1.0
    for summary in recall["by_category"].values():
        assert 0.0 <= summary["r5"] <= summary["r10"] <= 1.0
