"""Memory-tool paths: every path the model sends is checked and made canonical here.

The tool's paths are names, not files: nothing is opened on a disk, but a backend that
took ``/memories/../x`` or ``/memories/a\\b`` would still disagree with Claude (and with
the SDK's filesystem backend) about which file it names. So a path is ``/memories`` or
``/memories/`` and components of printable text, none of them ``.`` or ``..``, with no
backslash, NUL or other control character; a trailing ``/`` is dropped. Refusals are the
SDK's ``ToolError``, which the tool runner returns to the model as an error result.
"""

from __future__ import annotations

from anthropic.lib.tools import ToolError

ROOT = "/memories"
#: bounds that keep every path well inside graphmem's metadata limit
MAX_PATH_CHARS = 1024
MAX_NAME_CHARS = 255
MAX_DEPTH = 32


def _problem(path: str) -> str | None:
    if len(path) > MAX_PATH_CHARS:
        return f"is longer than {MAX_PATH_CHARS} characters"
    if "\\" in path:
        return "contains a backslash"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in path):
        return "contains a control character"
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid Unicode"
    return None


def canonical(path: object) -> str:
    """``/memories`` or ``/memories/a/b`` for a path under /memories; ``ToolError``
    for anything else."""
    if not isinstance(path, str):
        raise ToolError(f"Path must be a string, got: {type(path).__name__}")
    shown = path[:200]
    if (problem := _problem(path)) is not None:
        raise ToolError(f"Path {shown!r} {problem}")
    if path != ROOT and not path.startswith(ROOT + "/"):
        raise ToolError(f"Path must start with /memories, got: {shown}")
    rest = path[len(ROOT) + 1 :].removesuffix("/")
    if not rest:
        return ROOT
    names = rest.split("/")
    if any(n in (".", "..") for n in names):
        raise ToolError(f"Path {shown} would escape /memories directory")
    if "" in names:
        raise ToolError(f"Path {shown} has an empty component")
    if len(names) > MAX_DEPTH:
        raise ToolError(f"Path {shown} is deeper than {MAX_DEPTH} levels")
    if any(len(n) > MAX_NAME_CHARS for n in names):
        raise ToolError(f"Path {shown} has a name longer than {MAX_NAME_CHARS} characters")
    return f"{ROOT}/{'/'.join(names)}"


def ancestors(path: str) -> list[str]:
    """The directories above a canonical path, below /memories: ``/memories/a`` for
    ``/memories/a/b``."""
    names = path[len(ROOT) + 1 :].split("/")
    return [f"{ROOT}/{'/'.join(names[:n])}" for n in range(1, len(names))]


def under(path: str, directory: str) -> bool:
    """Whether a canonical file path lies below a canonical directory."""
    return path.startswith(directory + "/")
