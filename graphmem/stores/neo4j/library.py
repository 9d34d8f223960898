"""Named Cypher statements, read from ``cypher/<group>/<name>.cypher``
beside this module (package data, so an installed wheel carries them).

Every statement the graph store runs lives in one of these files, so a reader can
find the query behind any behaviour by its name, and Browser users can paste it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from graphmem.errors import ConfigurationError

_COMMENT = re.compile(r"^\s*//.*$", re.MULTILINE)


def default_root() -> Path:
    override = os.environ.get("GRAPHMEM_CYPHER_DIR")
    if override:
        return Path(override)
    return Path(__file__).resolve().parent / "cypher"


@dataclass(frozen=True)
class CypherLibrary:
    root: Path

    def __post_init__(self) -> None:
        if not self.root.is_dir():
            raise ConfigurationError(
                f"Cypher directory {self.root} not found; set GRAPHMEM_CYPHER_DIR"
            )

    def names(self, group: str | None = None) -> list[str]:
        base = self.root / group if group else self.root
        return sorted(
            p.relative_to(self.root).with_suffix("").as_posix() for p in base.rglob("*.cypher")
        )

    def text(self, name: str) -> str:
        return _read(self.root, name)

    def statements(self, name: str) -> list[str]:
        """The ';'-separated statements of a file (schema files hold several)."""
        body = _COMMENT.sub("", self.text(name))
        return [s.strip() for s in body.split(";") if s.strip()]

    def __getitem__(self, name: str) -> str:
        return self.text(name)

    def writes(self, name: str) -> bool:
        """Whether the statement changes data (or the schema): it then runs in a write
        transaction, on a cluster's leader; every other one in a read transaction, which
        a cluster's secondaries can serve. ``tests/integration/test_cypher_access.py``
        checks this against the query type Neo4j's planner reports for every file."""
        return _writes(self.text(name))


#: clauses and procedures that write; SHOW and other reads never match
_WRITES = re.compile(
    r"\b(CREATE|MERGE|SET|DELETE|REMOVE|FOREACH|DROP)\b|db\.create\.setNodeVectorProperty",
    re.IGNORECASE,
)


@lru_cache(maxsize=256)
def _writes(text: str) -> bool:
    return _WRITES.search(_COMMENT.sub("", text)) is not None


@lru_cache(maxsize=256)
def _read(root: Path, name: str) -> str:
    path = root / f"{name}.cypher"
    if not path.is_file():
        raise ConfigurationError(f"no Cypher file named {name!r} under {root}")
    return path.read_text(encoding="utf-8")


def library(root: Path | None = None) -> CypherLibrary:
    return CypherLibrary(root or default_root())
