"""What a run reports: its metadata (commit, machine), its JSON under bench/results and its
section of BENCHMARKS.md."""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "bench" / "results"
BENCHMARKS = ROOT / "BENCHMARKS.md"


def run_info() -> dict[str, Any]:
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    else:
        # a figure measured on code that no commit holds says so (what benches write
        # themselves does not count)
        changed = subprocess.run(
            ["git", "diff", "--quiet", "HEAD", "--", ".", ":!bench/results", ":!BENCHMARKS.md"],
            cwd=ROOT,
            check=False,
        )
        if changed.returncode == 1:
            commit += " with uncommitted changes"
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit,
        "machine": f"{os.cpu_count()} cores, {cpu}",
        "python": platform.python_version(),
    }


def save_json(name: str, data: dict[str, Any]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path


def update_section(name: str, body: str) -> None:
    """Replace (or append) the section between ``<!-- name -->`` markers in BENCHMARKS.md."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    block = f"{start}\n{body.rstrip()}\n{end}"
    text = BENCHMARKS.read_text() if BENCHMARKS.exists() else "# Benchmarks\n"
    pattern = re.compile(re.escape(start) + ".*?" + re.escape(end), re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: block, text)
    else:
        text = f"{text.rstrip()}\n\n{block}\n"
    BENCHMARKS.write_text(text)


def publish(name: str, result: dict[str, Any], section: str, out: Path | None) -> None:
    """A bench's result: to ``out`` (smoke runs), or to bench/results and its section of
    BENCHMARKS.md; the section is printed either way."""
    if out:
        out.write_text(json.dumps(result, indent=2) + "\n")
    else:
        save_json(name, result)
        update_section(name, section)
    print(section)
