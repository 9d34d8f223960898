"""The layers do not leak: read from every module's imports, wherever in the file they are
(under ``if TYPE_CHECKING:``, inside a function), with ``ast``; nothing is imported."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "graphmem"
FACADE = "graphmem.memory.facade"
BUILDER = "graphmem.memory.builder"
#: the builder's other half: it builds the capabilities, the router and the facade
COMPOSE = "graphmem.memory.compose"
ROUTER = "graphmem.memory.kinds.router"
#: text that reads as a Cypher statement (tests/unit/test_cypher_files.py checks the
#: same for every module but the store's plumbing)
CYPHER = re.compile(r"\b(MATCH|MERGE|CREATE)\s*\(|\bUNWIND\s+\$|\bCALL\s+db\.|\bRETURN\s+\w")


@dataclass(frozen=True)
class Import:
    source: str
    line: int
    #: the graphmem module imported, None for a module of another package
    target: str | None
    #: the name as written (``strawberry.types``, ``graphmem.stores.redis.events``)
    name: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line} imports {self.target or self.name}"


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@dataclass(frozen=True)
class Tree:
    """The modules of a package by name, with the syntax tree of each."""

    root: Path
    files: dict[str, Path]

    @classmethod
    def of(cls, root: Path) -> Tree:
        return cls(root, {module_name(p, root): p for p in sorted(root.rglob("*.py"))})

    def parsed(self, module: str) -> ast.Module:
        return ast.parse(self.files[module].read_text(encoding="utf-8"))

    def is_package(self, module: str) -> bool:
        return self.files[module].name == "__init__.py"

    def resolve(self, name: str) -> str | None:
        """The module ``name`` is, or the innermost module that holds it."""
        while name and name not in self.files:
            name = name.rpartition(".")[0]
        return name or None

    def imports(self, module: str) -> Iterator[Import]:
        """Every import of the module: ``from a.b import c`` is of module ``a.b.c`` when
        that is a module, else of ``a.b`` (an edge to the module itself, never to the
        packages around it)."""
        for node in ast.walk(self.parsed(module)):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield Import(module, node.lineno, self.resolve(alias.name), alias.name)
            elif isinstance(node, ast.ImportFrom):
                base = self._absolute(module, node)
                found: dict[str | None, str] = {}  # several names of one module: one import
                for alias in node.names:
                    inner = f"{base}.{alias.name}"
                    target = inner if inner in self.files else self.resolve(base)
                    found[target] = inner if target == inner else base
                for target, name in found.items():
                    yield Import(module, node.lineno, target, name)

    def _absolute(self, module: str, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        package = module.split(".")
        if not self.is_package(module):
            package = package[:-1]
        package = package[: len(package) - node.level + 1]
        return ".".join([*package, *([node.module] if node.module else [])])

    def graph(self) -> dict[str, list[Import]]:
        """Each module's imports of the package's own modules (not of itself)."""
        return {
            m: [i for i in self.imports(m) if i.target is not None and i.target != m]
            for m in self.files
        }


@cache
def graphmem() -> Tree:
    return Tree.of(PACKAGE)


def under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def cycle(graph: dict[str, list[Import]]) -> list[Import] | None:
    """One import cycle of the graph, as the imports that close it, or None."""
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[Import] = []

    def visit(module: str) -> list[Import] | None:
        state[module] = 1
        for imp in graph.get(module, []):
            assert imp.target is not None
            if state.get(imp.target) == 1:
                start = next((n for n, i in enumerate(path) if i.source == imp.target), len(path))
                return [*path[start:], imp]
            if imp.target not in state:
                path.append(imp)
                found = visit(imp.target)
                if found:
                    return found
                path.pop()
        state[module] = 2
        return None

    for module in sorted(graph):
        if module not in state and (found := visit(module)):
            return found
    return None


def reached(graph: dict[str, list[Import]], start: str, targets: set[str]) -> list[Import] | None:
    """The imports from ``start`` to the first of ``targets`` it reaches, or None."""
    seen = {start}
    frontier: list[tuple[str, list[Import]]] = [(start, [])]
    while frontier:
        module, via = frontier.pop(0)
        for imp in graph.get(module, []):
            assert imp.target is not None
            if imp.target in targets:
                return [*via, imp]
            if imp.target not in seen:
                seen.add(imp.target)
                frontier.append((imp.target, [*via, imp]))
    return None


def shown(imports: Iterable[Import]) -> str:
    return "\n  ".join(str(i) for i in imports)


def capabilities(tree: Tree) -> list[str]:
    """Every module under graphmem/memory/ but the facade, the builder (with the
    composition), the router and the packages' ``__init__`` files."""
    return [
        m
        for m in tree.files
        if under(m, "graphmem.memory")
        and not tree.is_package(m)
        and m not in {FACADE, BUILDER, COMPOSE, ROUTER}
    ]


# --- the checks, each a function of a tree: the tests below run them on graphmem and on
# --- a package made to break them
def import_cycles(tree: Tree) -> list[str]:
    found = cycle(tree.graph())
    return [] if found is None else ["an import cycle:\n  " + shown(found)]


def capabilities_reaching_up(tree: Tree) -> list[str]:
    graph = tree.graph()
    up = {FACADE, BUILDER, COMPOSE, ROUTER}
    problems = []
    for module in capabilities(tree):
        via = reached(graph, module, up)
        if via is not None:
            problems.append(f"capability {module} reaches {via[-1].target}:\n  " + shown(via))
    return problems


def capabilities_on_concrete_stores(tree: Tree) -> list[str]:
    """Capabilities (and the facade) reach stores through their protocols only: the
    builder alone picks Redis or Neo4j, so a capability runs over the in-memory fakes."""
    return [
        str(i)
        for module in [*capabilities(tree), FACADE, ROUTER]
        if module in tree.files
        for i in tree.imports(module)
        if i.target is not None
        and (under(i.target, "graphmem.stores.redis") or under(i.target, "graphmem.stores.neo4j"))
    ]


def domain_leaks(tree: Tree) -> list[str]:
    return [
        str(i)
        for m, imports in tree.graph().items()
        if under(m, "graphmem.domain")
        for i in imports
        if i.target is not None
        and not under(i.target, "graphmem.domain")
        and i.target != "graphmem.errors"
    ]


def statements(tree: Tree) -> set[str]:
    """The names of the package's Cypher files (``group/name``)."""
    cypher = tree.root / "stores" / "neo4j" / "cypher"
    return {f"{p.parent.name}/{p.stem}" for p in cypher.rglob("*.cypher")}


def api_leaks(tree: Tree) -> list[str]:
    named = statements(tree)
    problems = []
    for module in tree.files:
        if not under(module, "graphmem.api"):
            continue
        for i in tree.imports(module):
            if i.target is not None and (
                under(i.target, "graphmem.stores.neo4j") or under(i.target, "graphmem.stores.redis")
            ):
                problems.append(str(i))
        for node in ast.walk(tree.parsed(module)):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if CYPHER.search(node.value):
                    problems.append(f"{module}:{node.lineno} holds Cypher: {node.value[:60]!r}")
                elif node.value in named:
                    problems.append(f"{module}:{node.lineno} names the statement {node.value}")
    return problems


def store_leaks(tree: Tree) -> list[str]:
    return [
        str(i)
        for module in tree.files
        if under(module, "graphmem.stores")
        for i in tree.imports(module)
        if (i.target is not None and under(i.target, "graphmem.api")) or under(i.name, "strawberry")
    ]


CHECKS = {
    "import_cycles": import_cycles,
    "capabilities_reaching_up": capabilities_reaching_up,
    "capabilities_on_concrete_stores": capabilities_on_concrete_stores,
    "domain_leaks": domain_leaks,
    "api_leaks": api_leaks,
    "store_leaks": store_leaks,
}


def test_the_package_is_read() -> None:
    tree = graphmem()
    top = {FACADE, BUILDER, COMPOSE, ROUTER}
    assert top | {"graphmem.domain.models", "graphmem.errors"} <= set(tree.files)
    assert len(capabilities(tree)) > 20
    assert any(i.target == "graphmem.memory.tiers.ingest" for i in tree.graph()[FACADE])
    assert {"memory/upsert_batch", "analytics/memory_age"} <= statements(tree)


def test_no_import_cycle() -> None:
    problems = import_cycles(graphmem())
    assert not problems, "\n".join(problems)


def test_no_capability_reaches_the_facade_the_builder_or_the_router() -> None:
    """Directly or through another module (a package ``__init__`` that re-exports them)."""
    problems = capabilities_reaching_up(graphmem())
    assert not problems, "\n".join(problems)


def test_no_capability_imports_a_concrete_store() -> None:
    assert capabilities_on_concrete_stores(graphmem()) == []


def test_a_capability_may_not_import_redis_or_neo4j_stores(tmp_path: Path) -> None:
    tree = package(
        tmp_path,
        LAYERED
        | {
            "memory/tiers/ingest.py": "from graphmem.stores.redis.events import EventBus\n",
            "memory/facade.py": "def f():\n    from graphmem.stores.neo4j import graph\n",
            "stores/neo4j/graph.py": "",
            "memory/builder.py": "from graphmem.stores.redis.events import EventBus\n",
        },
    )
    assert capabilities_on_concrete_stores(tree) == [
        "graphmem.memory.tiers.ingest:1 imports graphmem.stores.redis.events",
        "graphmem.memory.facade:2 imports graphmem.stores.neo4j.graph",
    ]


def test_the_domain_imports_only_the_errors() -> None:
    problems = domain_leaks(graphmem())
    assert not problems, "the domain imports more than graphmem.errors:\n" + "\n".join(problems)


def test_the_api_holds_no_cypher_and_no_concrete_store() -> None:
    problems = api_leaks(graphmem())
    assert not problems, "\n".join(problems)


def test_the_stores_know_nothing_of_the_api() -> None:
    problems = store_leaks(graphmem())
    assert not problems, "\n".join(problems)


# --- each check finds what it is there for --------------------------------------------------
def package(root: Path, files: dict[str, str]) -> Tree:
    for name, text in files.items():
        path = root / "graphmem" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    for folder in (root / "graphmem").rglob("*"):
        if folder.is_dir() and not (folder / "__init__.py").exists():
            (folder / "__init__.py").write_text("", encoding="utf-8")
    (root / "graphmem" / "__init__.py").touch()
    return Tree.of(root / "graphmem")


LAYERED = {
    "errors.py": "",
    "domain/models.py": "from graphmem.errors import x\n",
    "stores/redis/events.py": "from graphmem.domain.models import y\n",
    "memory/facade.py": (
        "from graphmem.memory.tiers import ingest\nfrom graphmem.memory.kinds.router import R\n"
    ),
    "memory/builder.py": "from graphmem.memory.compose import compose\n",
    "memory/compose.py": "from graphmem.memory.facade import Memory\n",
    "memory/kinds/router.py": "from graphmem.memory.tiers.ingest import Ingest\n",
    "memory/tiers/ingest.py": "import graphmem.stores.protocols\n",
    "stores/protocols.py": "",
    "api/app.py": "from graphmem.memory.builder import MemoryBuilder\nQ = 'the MATCH of the day'\n",
}


def test_a_layered_package_passes_every_check(tmp_path: Path) -> None:
    tree = package(tmp_path, LAYERED)
    assert {name: check(tree) for name, check in CHECKS.items()} == {n: [] for n in CHECKS}


def test_a_cycle_is_shown_import_by_import(tmp_path: Path) -> None:
    tree = package(
        tmp_path,
        LAYERED
        | {
            "memory/kinds/router.py": "if TYPE_CHECKING:\n    from graphmem.memory import facade\n",
            "memory/tiers/ingest.py": (
                "def later():\n    from graphmem.memory.kinds import router\n"
            ),
        },
    )
    (problem,) = import_cycles(tree)
    lines = problem.splitlines()[1:]
    assert [line.strip() for line in lines] == [
        "graphmem.memory.facade:1 imports graphmem.memory.tiers.ingest",
        "graphmem.memory.tiers.ingest:2 imports graphmem.memory.kinds.router",
        "graphmem.memory.kinds.router:2 imports graphmem.memory.facade",
    ]


def test_a_capability_may_not_reach_up_even_through_a_package(tmp_path: Path) -> None:
    tree = package(
        tmp_path,
        LAYERED
        | {
            "memory/__init__.py": "from graphmem.memory.facade import Memory\n",
            "memory/tiers/spill.py": "from graphmem.memory import Memory\n",
            "memory/tiers/removal.py": "from graphmem.memory.builder import MemoryBuilder\n",
        },
    )
    problems = capabilities_reaching_up(tree)
    assert [p.splitlines()[0] for p in problems] == [
        "capability graphmem.memory.tiers.removal reaches graphmem.memory.builder:",
        "capability graphmem.memory.tiers.spill reaches graphmem.memory.facade:",
    ]
    assert problems[1].splitlines()[1:] == [
        "  graphmem.memory.tiers.spill:1 imports graphmem.memory",
        "  graphmem.memory:1 imports graphmem.memory.facade",
    ]


def test_the_domain_may_import_only_itself_and_the_errors(tmp_path: Path) -> None:
    tree = package(
        tmp_path,
        LAYERED
        | {
            "enrich/lexical.py": "",
            "domain/models.py": (
                "from graphmem.errors import x\nfrom graphmem.domain import other\n"
                "from graphmem.enrich import lexical\n"
            ),
            "domain/other.py": "import numpy\n",
        },
    )
    assert domain_leaks(tree) == ["graphmem.domain.models:3 imports graphmem.enrich.lexical"]


def test_the_api_may_not_hold_cypher_nor_import_a_concrete_store(tmp_path: Path) -> None:
    tree = package(
        tmp_path,
        LAYERED
        | {
            "stores/neo4j/graph.py": "",
            "stores/neo4j/cypher/memory/get_by_ids.cypher": "MATCH (m:Memory) RETURN m",
            "api/app.py": (
                "from graphmem.stores.neo4j.graph import Store\n"
                "def f():\n    from graphmem.stores.redis import events\n"
                "Q = 'MATCH (m:Memory) RETURN m'\n"
                "run('memory/get_by_ids', 'memory/other')\n"
            ),
        },
    )
    assert api_leaks(tree) == [
        "graphmem.api.app:1 imports graphmem.stores.neo4j.graph",
        "graphmem.api.app:3 imports graphmem.stores.redis.events",
        "graphmem.api.app:4 holds Cypher: 'MATCH (m:Memory) RETURN m'",
        "graphmem.api.app:5 names the statement memory/get_by_ids",
    ]


def test_the_stores_may_not_import_the_api_nor_strawberry(tmp_path: Path) -> None:
    tree = package(
        tmp_path,
        LAYERED
        | {
            "stores/redis/events.py": (
                "import strawberry\nfrom graphmem.api import app\n"
                "from strawberry.types import Info\n"
            ),
        },
    )
    assert store_leaks(tree) == [
        "graphmem.stores.redis.events:1 imports strawberry",
        "graphmem.stores.redis.events:2 imports graphmem.api.app",
        "graphmem.stores.redis.events:3 imports strawberry.types",
    ]
