"""The wheel is the product: installed from it (not from this checkout), graphmem finds
every named Cypher statement and the files its commands need."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.conftest import ROOT

LIBRARY = ROOT / "graphmem" / "stores" / "neo4j" / "cypher"


def build_wheel(out: Path) -> Path:
    """From a copy of the sources: setuptools reuses a ``build/`` folder beside them, and
    a stale one could hide a file the package data misses."""
    source = out / "source"
    shutil.copytree(
        ROOT / "graphmem", source / "graphmem", ignore=shutil.ignore_patterns("__pycache__")
    )
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (ROOT / name).exists():
            shutil.copy(ROOT / name, source / name)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(out),
            str(source),
        ],
        check=True,
        capture_output=True,
        cwd=out,
    )
    (wheel,) = out.glob("graphmem-*.whl")
    return wheel


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
