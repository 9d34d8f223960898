"""The wheel is the product: installed from it (not from this checkout), graphmem finds
every named Cypher statement and the files its commands need."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.conftest import ROOT
from tests.support.wheel import build_wheel

LIBRARY = ROOT / "graphmem" / "stores" / "neo4j" / "cypher"


def test_an_installed_wheel_runs_every_named_statement(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    wanted = {
        "graphmem/" + p.relative_to(ROOT / "graphmem").as_posix() for p in LIBRARY.rglob("*.cypher")
    }
    assert len(wanted) > 100
    assert wanted <= names, sorted(wanted - names)[:5]
    assert "graphmem/ops/devstack/neo4j/pom.xml" in names
    assert not any(n.startswith(("tests/", "bench/")) for n in names)

    site = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            str(site),
            str(wheel),
        ],
        check=True,
        capture_output=True,
    )
    probe = (
        "import graphmem.stores.neo4j.library as lib; "
        "print(lib.__file__); print(len(lib.library().names())); "
        "print(lib.library().text('memory/get_by_ids')[:0] == '')"
    )
    env = {k: v for k, v in os.environ.items() if k != "GRAPHMEM_CYPHER_DIR"}
    out = subprocess.run(
        [sys.executable, "-c", probe],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env | {"PYTHONPATH": str(site)},
    ).stdout.split()
    assert out[0].startswith(str(site)), out[0]
    assert int(out[1]) == len(wanted)
    assert out[2] == "True"
