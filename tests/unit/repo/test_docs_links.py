"""The README and docs/ hold together: every relative link resolves to a file (and, with a
#fragment, to a heading or anchor of a Markdown file), and the README stays a front door."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

README_MAX_CHARS = 10_000


_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)
_HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def slug(heading: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*\*|__|\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    found: set[str] = set(_HTML_ANCHOR.findall(text))
    counts: dict[str, int] = {}
    for heading in _HEADING.findall(text):
        base = slug(heading)
        n = counts.get(base, 0)
        found.add(base if n == 0 else f"{base}-{n}")
        counts[base] = n + 1
    return found


def relative_links(path: Path) -> list[str]:
    text = _FENCE.sub("", path.read_text(encoding="utf-8"))
    text = re.sub(r"`[^`\n]*`", "", text)  # inline code is not a link
    return [
        target
        for target in _LINK.findall(text)
        if not re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I)  # http:, https:, mailto: ...
    ]


@pytest.mark.parametrize("doc", documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(doc: Path) -> None:
    broken = []
    for target in relative_links(doc):
        file_part, _, fragment = target.partition("#")
        resolved = (doc.parent / file_part).resolve() if file_part else doc
        if not resolved.exists():
            broken.append(f"{target}: no such file")
            continue
        if fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
            broken.append(f"{target}: no heading or anchor #{fragment}")
    assert not broken, f"{doc.relative_to(ROOT)}: " + "; ".join(broken)


def test_readme_is_a_front_door() -> None:
    size = len((ROOT / "README.md").read_text(encoding="utf-8"))
    assert size <= README_MAX_CHARS, f"README.md has {size} characters (max {README_MAX_CHARS})"


def test_slugs_follow_github() -> None:
    assert slug("Retrieval: LoCoMo dev split, turn-level recall") == (
        "retrieval-locomo-dev-split-turn-level-recall"
    )
    assert slug("Memory types") == "memory-types"
    assert slug("The `memoryEvents` feed") == "the-memoryevents-feed"
