"""Both notebooks run top to bottom against the real stack (on copies: the committed
outputs stay as the last deliberate run left them)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, Stack

sys.path.insert(0, str(ROOT / "notebooks"))
from execute import NOTEBOOKS, execute


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(
    path: Path, tmp_path: Path, stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in {
        "NEO4J_URI": stack.neo4j_uri,
        "REDIS_URL": stack.redis_url,
        "NEO4J_PASSWORD": stack.neo4j_password,
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("GRAPHMEM_URL", raising=False)
    notebook = execute(path, tmp_path / path.name)
    errors = [
        o
        for c in notebook.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if o.get("output_type") == "error"
    ]
    assert not errors, errors
    images = [
        o for c in notebook.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})
    ]
    if path.stem == "analyst_tour":
        assert len(images) == 3  # utilisation, co-occurrence network, episode outcomes
    assert os.path.exists(tmp_path / path.name)
