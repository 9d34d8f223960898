"""The memory tool's text edits and answers match the SDK's own filesystem backend:
each case runs the same command on BetaLocalFilesystemMemoryTool in a temporary
directory and on these pure functions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from anthropic.lib.tools import ToolError
from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool

from graphmem.integrations.anthropic import files

TEXT = "first line\nsecond: black\nx\nx\nlast\n"


def reference(tmp_path: Path, command: dict[str, Any]) -> str:
    tool = BetaLocalFilesystemMemoryTool(str(tmp_path))
    tool.call({"command": "create", "path": "/memories/f.md", "file_text": TEXT})
    return str(tool.call(command))


@pytest.mark.parametrize("view_range", [None, [2, 3], [0, -1], [4, 99]])
def test_view_file_as_the_sdk(tmp_path: Path, view_range: list[int] | None) -> None:
    command = {"command": "view", "path": "/memories/f.md", "view_range": view_range}
    assert files.view_file("/memories/f.md", TEXT, view_range) == reference(tmp_path, command)


def test_str_replace_as_the_sdk(tmp_path: Path) -> None:
    command = {"command": "str_replace", "path": "/memories/f.md", "old_str": "black"}
    command["new_str"] = "oat\nmilk"
    changed, answer = files.replace("/memories/f.md", TEXT, "black", "oat\nmilk")
    assert answer == reference(tmp_path, command)
    assert (tmp_path / "memories" / "f.md").read_text() == changed


@pytest.mark.parametrize("old", ["absent", "x"])
def test_str_replace_refusals_as_the_sdk(tmp_path: Path, old: str) -> None:
    command = {"command": "str_replace", "path": "/memories/f.md", "old_str": old, "new_str": ""}
    with pytest.raises(ToolError) as ours:
        files.replace("/memories/f.md", TEXT, old, "")
    with pytest.raises(ToolError) as theirs:
        reference(tmp_path, command)
    assert str(ours.value) == str(theirs.value)


def test_empty_old_str_is_refused() -> None:
    with pytest.raises(ToolError, match="must not be empty"):
        files.replace("/memories/f.md", TEXT, "", "y")


@pytest.mark.parametrize("line", [0, 2, 5])
def test_insert_as_the_sdk(tmp_path: Path, line: int) -> None:
    command = {"command": "insert", "path": "/memories/f.md", "insert_line": line}
    command["insert_text"] = "new\n"
    reference(tmp_path, command)
    assert files.insert(TEXT, line, "new\n") == (tmp_path / "memories" / "f.md").read_text()


@pytest.mark.parametrize("line", [-1, 6])
def test_insert_out_of_range_as_the_sdk(tmp_path: Path, line: int) -> None:
    command = {"command": "insert", "path": "/memories/f.md", "insert_line": line}
    command["insert_text"] = "z"
    with pytest.raises(ToolError) as ours:
        files.insert(TEXT, line, "z")
    with pytest.raises(ToolError) as theirs:
        reference(tmp_path, command)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("view_range", ["1-2", [1], [1, "2"], [True, 2], {"a": 1}])
def test_a_bad_view_range_is_refused(view_range: object) -> None:
    with pytest.raises(ToolError, match="view_range"):
        files.view_file("/memories/f.md", TEXT, view_range)


@pytest.mark.parametrize(
    ("size", "shown"), [(0, "0B"), (5, "5B"), (1024, "1K"), (1536, "1.5K"), (3 << 20, "3M")]
)
def test_sizes_as_the_sdk(size: int, shown: str) -> None:
    assert files.format_size(size) == shown


def test_directory_view_lists_two_levels_in_name_order() -> None:
    sizes = {
        "/memories/b.md": 10,
        "/memories/a/z.md": 1,
        "/memories/a/deep/er/f.md": 1024,
        "/memories/a.txt": 2,
        "/memories/.hidden/x": 7,
        "/memories/other/y": 3,
    }
    view = files.view_directory("/memories/a", sizes)
    assert view.splitlines()[1:] == [
        "1.0K\t/memories/a",
        "1K\t/memories/a/deep/",
        "1K\t/memories/a/deep/er/",
        "1B\t/memories/a/z.md",
    ]
    assert [
        line.split("\t")[1] for line in files.view_directory("/memories", sizes).splitlines()[1:]
    ] == [
        "/memories",
        "/memories/a/",
        "/memories/a/deep/",
        "/memories/a/z.md",
        "/memories/a.txt",
        "/memories/b.md",
        "/memories/other/",
        "/memories/other/y",
    ]
