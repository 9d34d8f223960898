"""What the memory tool's commands do to a file's text, and how they answer: the same
edits, messages and errors as the SDK's own filesystem backend
(``anthropic.lib.tools._beta_builtin_memory_tool``), so Claude sees one behaviour
whichever backend holds its memories. Pure functions: graphmem is reached in ``tool.py``.
"""

from __future__ import annotations

from collections.abc import Mapping

from anthropic.lib.tools import ToolError

from graphmem.integrations.anthropic.paths import ROOT, under

MAX_LINES = 999_999
LINE_NUMBER_WIDTH = len(str(MAX_LINES))


def format_size(size: int) -> str:
    """``0B``, ``512B``, ``1.5K``, ``2M``: the SDK's sizes in a directory view."""
    if size == 0:
        return "0B"
    units = ["B", "K", "M", "G"]
    i = min((size.bit_length() - 1) // 10, len(units) - 1)
    scaled = size / (1024**i)
    return f"{int(scaled)}{units[i]}" if scaled == int(scaled) else f"{scaled:.1f}{units[i]}"


def size_of(text: str) -> int:
    return len(text.encode("utf-8"))


def _numbered(lines: list[str], first: int) -> str:
    return "\n".join(
        f"{str(n + first).rjust(LINE_NUMBER_WIDTH)}\t{line}" for n, line in enumerate(lines)
    )


def view_file(path: str, text: str, view_range: object) -> str:
    lines = text.split("\n")
    if len(lines) > MAX_LINES:
        raise ToolError(f"File {path} exceeds maximum line limit of 999,999 lines.")
    shown, first = lines, 1
    if view_range is not None:
        if (
            not isinstance(view_range, list)
            or len(view_range) != 2
            or not all(isinstance(n, int) and not isinstance(n, bool) for n in view_range)
        ):
            raise ToolError("Invalid `view_range`: it should be a list of two line numbers.")
        start = max(1, view_range[0]) - 1
        end = len(lines) if view_range[1] == -1 else view_range[1]
        shown, first = lines[start:end], start + 1
    return f"Here's the content of {path} with line numbers:\n" + _numbered(shown, first)


def view_directory(path: str, sizes: Mapping[str, int]) -> str:
    """Files and directories up to two levels below ``path`` (hidden names left out), as
    the SDK lists them; a directory's size is the total of the files below it."""
    below = {p: s for p, s in sizes.items() if under(p, path)}
    entries: dict[str, int] = {}
    for file, size in below.items():
        names = file[len(path) + 1 :].split("/")
        if any(n.startswith(".") for n in names[:2]):
            continue
        for depth in range(1, min(len(names), 2) + 1):
            rel = "/".join(names[:depth]) + ("/" if depth < len(names) else "")
            entries[rel] = entries.get(rel, 0) + size
    header = (
        f"Here're the files and directories up to 2 levels deep in {path}, excluding hidden items:"
    )
    # The SDK walks each directory in name order, a directory's entries after it.
    order = sorted(entries, key=lambda rel: rel.rstrip("/").split("/"))
    lines = [f"{format_size(sum(below.values()))}\t{path}"]
    lines += [f"{format_size(entries[rel])}\t{path}/{rel}" for rel in order]
    return f"{header}\n" + "\n".join(lines)


def replace(path: str, text: str, old: str, new: str) -> tuple[str, str]:
    """The text with ``old`` replaced by ``new`` and the SDK's answer; ``ToolError`` when
    ``old`` is absent or not unique (nothing is written then)."""
    if not old:
        raise ToolError(f"No replacement was performed, old_str must not be empty in {path}.")
    count = text.count(old)
    if count == 0:
        raise ToolError(
            f"No replacement was performed, old_str `{old}` did not appear verbatim in {path}."
        )
    if count > 1:
        at: list[int] = []
        pos = text.find(old)
        while pos != -1:
            at.append(text[:pos].count("\n") + 1)
            pos = text.find(old, pos + 1)
        raise ToolError(
            f"No replacement was performed. Multiple occurrences of old_str `{old}` in lines: "
            f"{', '.join(map(str, at))}. Please ensure it is unique"
        )
    changed = text[: text.find(old)].count("\n")
    result = text.replace(old, new)
    lines = result.split("\n")
    start, end = max(0, changed - 2), min(len(lines), changed + 3)
    snippet = _numbered(lines[start:end], start + 1)
    return result, (
        "The memory file has been edited. Here is the snippet showing the change "
        f"(with line numbers):\n{snippet}"
    )


def insert(text: str, line: int, new: str) -> str:
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if line < 0 or line > len(lines):
        raise ToolError(
            f"Invalid `insert_line` parameter: {line}. It should be within the range "
            f"[0, {len(lines)}]."
        )
    lines.insert(line, new.rstrip("\n"))
    result = "\n".join(lines)
    return result if result.endswith("\n") else result + "\n"


def is_root(path: str) -> bool:
    return path == ROOT
