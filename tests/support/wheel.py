"""graphmem's wheel, built from a copy of this checkout's sources (the packaging test and
the installed-wheel smoke test)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT


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
