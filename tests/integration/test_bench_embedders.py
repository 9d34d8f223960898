"""The embedder benchmark runs end to end on a tiny input, so it cannot rot.

Smoke only: nothing here asserts a speed (figures come from full runs, BENCHMARKS.md).
It needs no services: the models come from installed packages and Maven jars (installed
by the bench as `graphmem services install` does), recall is computed offline.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import ROOT


def quick_run(module: str, tmp_path: Path) -> Any:
    """``python -m bench.<module> --quick``'s result."""
    out = tmp_path / f"{module}.json"
    done = subprocess.run(
        [sys.executable, "-m", f"bench.{module}", "--quick", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text())


def test_embedders_bench_smoke(tmp_path: Path) -> None:
    result = quick_run("embedders", tmp_path)
    assert set(result["models"]) == {
        "minilm-int8",
        "minilm-int8-float",
        "minilm-fp32",
        "bge-small-int8",
        "bge-small-fp32",
        "e5-small-int8",
    }
    for model in result["models"].values():
        assert model["load_s"] > 0
        assert model["rss_peak_mb"] >= model["rss_loaded_mb"] > model["rss_baseline_mb"] > 0
        summary = model["recall"]
        assert summary["questions"] > 0
        assert 0.0 <= summary["r5"] <= summary["r10"] <= 1.0
    assert result["fp32_vs_int8_cosine"]["min"] > 0.97
    assert result["bge_fp32_vs_int8_cosine"]["min"] > 0.9
    rows = {row["key"]: row for row in result["throughput"]}
    assert {"int8i-t1", "int8-t1", "fp32-t1", "fp32-t2", "bge8-t1", "bge32-t1", "e5-t1"} <= set(
        rows
    )
    assert rows["int8i-t1"]["embedder"] == "minilm-int8" and rows["int8i-t1"]["batch_size"] == 1
    assert all(row["items_per_s"] > 0 for row in rows.values())
    assert result["best_int8"] in rows
    long = {row["batch_tokens"]: row for row in result["long_texts"]}
    assert set(long) == {2048, 1024, 32 * 256}
    for row in long.values():
        assert row["tokens"] == 256 and row["texts"] == 8  # cut at the model's limit
        assert row["peak_over_loaded_mb"] >= 0 and row["texts_per_s"] > 0


def test_kernels_bench_smoke(tmp_path: Path) -> None:
    result = quick_run("kernels", tmp_path)
    ways = {row["way"]: row for row in result["speed"]}
    assert len(ways) == 5 and all(row["per_cpu_second"] > 0 for row in ways.values())
    assert {row["kernels"] for row in ways.values()} == {"integer", "float"}
    assert 0.97 < result["cosine"]["min"] <= result["cosine"]["mean"] < 1.0
    assert set(result["recall"]) == {"float", "integer", "float turns, integer queries"}
    for summary in result["recall"].values():
        assert summary["questions"] > 0 and 0.0 <= summary["r5"] <= summary["r10"] <= 1.0
