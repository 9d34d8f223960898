"""The guides stay guides and the reference stays complete: docs/recall.md and
docs/operations.md say how things work and how to run them within a reader's patience
(measurements and their history live in BENCHMARKS.md and CHANGELOG.md), and every
setting graphmem reads and every command and option it accepts is documented."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from graphmem.ops import cli
from graphmem.settings import MemoryConfig, Settings, setting_name

ROOT = Path(__file__).resolve().parents[3]
GUIDE_MAX_CHARS = 15_000


def docs_text() -> str:
    paths = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return "\n".join(p.read_text(encoding="utf-8") for p in paths)


@pytest.mark.parametrize("name", ["recall.md", "operations.md"])
def test_guides_stay_short(name: str) -> None:
    size = len((ROOT / "docs" / name).read_text(encoding="utf-8"))
    assert size < GUIDE_MAX_CHARS, f"docs/{name} has {size} characters (under {GUIDE_MAX_CHARS})"


def setting_variables() -> set[str]:
    """Each setting's environment variable, as graphmem names it in its errors."""
    names = {setting_name((field,)) for field in Settings.model_fields if field != "memory"}
    names |= {setting_name(("memory", field)) for field in MemoryConfig.model_fields}
    return names


def read_variables() -> set[str]:
    """The GRAPHMEM_ variables the code reads from the environment itself."""
    found: set[str] = set()
    for path in (ROOT / "graphmem").rglob("*.py"):
        found |= set(re.findall(r"environ\.get\(\s*\"(GRAPHMEM_[A-Z_]+)\"", path.read_text()))
    return found


def test_every_environment_variable_is_documented() -> None:
    text = docs_text()
    wanted = setting_variables() | read_variables()
    missing = sorted(name for name in wanted if not re.search(rf"\b{name}\b", text))
    assert not missing, f"not documented in README.md or docs/: {missing}"


def help_of(*argv: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        cli.main([*argv, "--help"])
    return out.getvalue()


def commands() -> list[str]:
    usage = re.search(r"\{([a-z,-]+)\}", help_of())
    assert usage, "graphmem --help lists no commands"
    return usage.group(1).split(",")


def test_every_command_and_option_is_in_the_cli_guide() -> None:
    guide = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    missing = []
    for command in commands():
        if f"graphmem {command}" not in guide:
            missing.append(command)
        for option in set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", help_of(command))):
            if option != "--help" and option not in guide:
                missing.append(f"{command} {option}")
    assert not missing, f"docs/cli.md does not document: {missing}"


def test_the_checks_see_what_they_check() -> None:
    assert "NEO4J_URI" in setting_variables()
    assert "GRAPHMEM_MEMORY__HOT_TOKEN_LIMIT" in setting_variables()
    assert "GRAPHMEM_TOKENIZER_PATH" in read_variables()
    assert {"serve", "worker", "import"} <= set(commands())
    assert "--drain" in help_of("worker")


def test_every_expensive_field_is_named_in_the_limits_guide() -> None:
    from graphmem.api.graphql.admission import EXPENSIVE

    guide = (ROOT / "docs" / "limits.md").read_text(encoding="utf-8")
    missing = sorted(f for f in EXPENSIVE if f"`{f}`" not in guide)
    assert not missing, f"docs/limits.md does not name the expensive fields {missing}"
