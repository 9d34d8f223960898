"""docs/architecture.md follows the code: every module or package path it names exists,
and it names every package under graphmem/, so a reader who follows its names finds the
code, and a package added or moved without the document fails here."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "graphmem"
DOC = ROOT / "docs" / "architecture.md"

_SPAN = re.compile(r"`([^`\n]+)`")
_PATHLIKE = re.compile(r"[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*/?")


def named_paths(text: str) -> set[str]:
    """The code spans that name a file or folder: a path with a slash, or a file name
    with an extension (`spill.py`); ids, routes (`/graphql`), URLs and placeholders
    (`<group>`) are not paths."""
    found = set()
    for span in _SPAN.findall(text):
        if not _PATHLIKE.fullmatch(span) or span.startswith("."):
            continue
        if "/" in span or re.search(r"\.(py|cypher|md|xml)$", span):
            found.add(span)
    return found


def resolves(path: str) -> bool:
    """A path names a file or folder from the repository's root or from graphmem/
    (`memory/search/`); a bare file name, some file of that name under graphmem/."""
    if "/" not in path:
        return any(PACKAGE.rglob(path))
    stripped = path.rstrip("/")
    return any((base / stripped).exists() for base in (ROOT, PACKAGE))


def packages() -> list[str]:
    return sorted(str(init.parent.relative_to(ROOT)) for init in PACKAGE.rglob("__init__.py"))


def test_every_named_path_exists() -> None:
    missing = sorted(p for p in named_paths(DOC.read_text(encoding="utf-8")) if not resolves(p))
    assert not missing, f"docs/architecture.md names paths that do not exist: {missing}"


def test_every_package_is_named() -> None:
    named = {p.rstrip("/") for p in named_paths(DOC.read_text(encoding="utf-8"))}
    named |= {f"graphmem/{p}" for p in named}
    unnamed = [p for p in packages() if p not in named]
    assert not unnamed, f"docs/architecture.md does not name these packages: {unnamed}"


def test_the_checks_read_paths_as_meant() -> None:
    text = (
        "`graphmem/memory/tiers/spill.py` `memory/search/` `spill.py` `nowhere/else.py` "
        "`/graphql/ide/` `gm:{enrich}` `cypher/<group>/<name>.cypher` `limit`"
    )
    assert named_paths(text) == {
        "graphmem/memory/tiers/spill.py",
        "memory/search/",
        "spill.py",
        "nowhere/else.py",
    }
    assert resolves("graphmem/memory/tiers/spill.py") and resolves("memory/search/")
    assert resolves("spill.py") and not resolves("nowhere/else.py")
    assert "graphmem/memory/search" in packages() and "graphmem" in packages()
