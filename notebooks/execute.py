"""Run the notebooks against the stack the environment points at and save their outputs.

    .venv/bin/python notebooks/execute.py            # rewrites notebooks/*.ipynb in place

The committed outputs come from such a run; tests/integration/test_notebooks.py runs the
same notebooks (on copies) in CI so they cannot rot.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def execute(path: Path, out: Path | None = None, timeout: int = 600) -> nbformat.NotebookNode:
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(ROOT)}},
    ).execute()
    nbformat.write(notebook, out or path)
    return notebook


if __name__ == "__main__":
    for nb_path in NOTEBOOKS:
        execute(nb_path)
        print(f"executed {nb_path.relative_to(ROOT)}", file=sys.stderr)
