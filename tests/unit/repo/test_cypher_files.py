"""Every statement lives in cypher/, is parameterised and scoped by tenant."""

from __future__ import annotations

import ast
import re

from graphmem.stores.neo4j.library import library
from tests.conftest import ROOT

TENANTLESS = {
    "admin/ping",
    "admin/index_state",
    "admin/index_ids",  # bench/capacity.py: which index a directory on disk belongs to
    "admin/await_indexes",
    "admin/change_initial_password",
    "admin/tenants",  # lists tenant ids only, for maintenance to visit each
    "admin/tombstone_tenants",  # the same, those with tombstones to sweep
    "admin/memory_tenants",  # the same, as the memories say, for the term backfill
    "admin/record_tenants",  # the same, for the record field-token migration
    "admin/embedding_spaces",  # tenant ids and their models' names, for the start-up line
    "admin/embedding_spaces_legacy",  # migration: tags every tenant's pre-existing vectors
    # migration backfill over every tenant; each row names its own tenant
    "admin/scope_tokens_missing",
    "admin/scope_tokens_set",
    "admin/term_bytes_set",
    "admin/await_index",
    "admin/migration_done",  # markers of one-off migrations, database-wide
    "admin/migration_mark",
    # the per-tenant indexes' DDL: names from a hash of the tenant, no data read or written
    "tenant/fulltext_index",
    "tenant/vector_index",
    "tenant/item_fulltext_index",
    # two counts from the count store (all memories, the tenant's label): how wide search
    # probes the shared vector index; no memory read, nothing returned to a client
    "memory/index_share",
    # tenants with store items whose vector a dead process left due, for the sweep to
    # visit each (memory/kinds/items/vectors.py); no item data returned
    "admin/item_vector_tenants",
}  # server-level statements: no tenant data read or written


def test_every_data_query_is_scoped_by_tenant() -> None:
    lib = library()
    names = [n for n in lib.names() if not n.startswith("schema/")]
    assert names, "no Cypher files found"
    for name in names:
        if name in TENANTLESS:
            continue
        text = lib.text(name)
        assert "$tenant" in text, f"{name} does not filter on $tenant"
        # every MATCH/MERGE of a tenant-owned label pins the tenant
        for node in re.findall(r"\(\w*:(?:Memory|Session|User|Entity)\s*\{[^}]*\}", text):
            assert "tenant: $tenant" in node, f"{name}: {node} is not tenant-scoped"


def test_schema_files_are_idempotent() -> None:
    lib = library()
    for name in lib.names("schema"):
        for statement in lib.statements(name):
            if statement.startswith("MATCH"):
                # a backfill: sets one property only where it is still missing
                (prop,) = set(re.findall(r"SET \w+\.(\w+) =", statement))
                assert f".{prop} IS NULL" in statement, f"{name}: {statement[:60]}"
                continue
            guard = "IF EXISTS" if statement.startswith("DROP") else "IF NOT EXISTS"
            assert guard in statement, f"{name}: {statement[:60]}"


def test_no_cypher_text_in_python_outside_the_store_plumbing() -> None:
    """Cypher lives in files; the API layer and the service never build queries."""
    keywords = re.compile(r"\b(MATCH|MERGE|CREATE)\s*\(|\bUNWIND\s+\$|\bCALL\s+db\.|\bRETURN\s+\w")
    for path in (ROOT / "graphmem").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                assert not keywords.search(node.value), f"Cypher text in {path}: {node.value[:60]}"


def test_every_file_the_store_names_exists() -> None:
    lib = library()
    plumbing = [
        *(ROOT / "graphmem" / "stores").rglob("*.py"),
        ROOT / "graphmem/ops/devstack/neo4j.py",
    ]
    for path in plumbing:
        for name in re.findall(r'"((?:memory|admin|tenant)/[a-z_]+)"', path.read_text()):
            assert name in lib.names(), f"{path} names missing Cypher file {name}"
