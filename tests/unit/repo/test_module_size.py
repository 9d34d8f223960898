"""Every module of the package stays small enough to read whole: at most ``MAX_LINES``
lines. A module that grows past it holds more than one concept and is split by concept."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "graphmem"
MAX_LINES = 400


def test_no_module_is_over_the_limit() -> None:
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 50, f"found {len(modules)} modules under {PACKAGE}"
    sizes = {path: len(path.read_text(encoding="utf-8").splitlines()) for path in modules}
    over = [
        f"{path.relative_to(PACKAGE.parent)} ({lines} lines)"
        for path, lines in sizes.items()
        if lines > MAX_LINES
    ]
    assert not over, f"modules over {MAX_LINES} lines: " + ", ".join(over)
