"""Memory-tool paths: canonical forms, and every way out of /memories refused."""

from __future__ import annotations

import pytest
from anthropic.lib.tools import ToolError

from graphmem.integrations.anthropic.paths import ancestors, canonical, under


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/memories", "/memories"),
        ("/memories/", "/memories"),
        ("/memories/a.md", "/memories/a.md"),
        ("/memories/dir/", "/memories/dir"),
        ("/memories/ünï cødé/n.txt", "/memories/ünï cødé/n.txt"),
        ("/memories/..hidden", "/memories/..hidden"),
    ],
)
def test_canonical_paths(path: str, expected: str) -> None:
    assert canonical(path) == expected


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("/memories/../etc/passwd", "escape"),
        ("/memories/a/..", "escape"),
        ("/memories/./a", "escape"),
        ("/etc/passwd", "must start with /memories"),
        ("memories/a", "must start with /memories"),
        ("/memoriesx", "must start with /memories"),
        ("", "must start with /memories"),
        ("/memories\\..\\x", "backslash"),
        ("/memories/a\x00", "control character"),
        ("/memories/a\tb", "control character"),
        ("/memories/a\x7f", "control character"),
        ("/memories//a", "empty component"),
        ("/memories/\udc80", "not valid Unicode"),
        ("/memories/" + "n" * 256, "longer than 255"),
        ("/memories/" + "d/" * 33 + "f", "deeper than 32"),
        ("/memories/" + "x/" * 600, "longer than 1024"),
    ],
)
def test_paths_outside_memories_are_refused(path: str, why: str) -> None:
    with pytest.raises(ToolError, match=why):
        canonical(path)


@pytest.mark.parametrize("value", [None, 42, ["/memories"], b"/memories"])
def test_a_path_must_be_a_string(value: object) -> None:
    with pytest.raises(ToolError, match="must be a string"):
        canonical(value)


def test_ancestors_and_under() -> None:
    assert ancestors("/memories/a/b/c.md") == ["/memories/a", "/memories/a/b"]
    assert ancestors("/memories/c.md") == []
    assert under("/memories/a/b", "/memories/a")
    assert not under("/memories/ab", "/memories/a")
    assert under("/memories/a", "/memories")
