"""Store items and the knowledge graph across `graphmem export` and `graphmem import`,
on a real `graphmem serve`: a tenant's export imported into a fresh tenant gives the
same items (values, namespaces, times) and the same graph, searchable by text; a second
import changes nothing; bad lines are skipped with their line numbers; an item of a
user erased after the export was taken is not brought back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphmem.client import Graphmem, item_put
from graphmem.transfer.exporter import export_tenant, export_user
from graphmem.transfer.importer import import_file
from tests.conftest import ROOT, Api, Stack, new_tenant, serving

SOURCE, TARGET, ERASING = (f"gt-{n}-{uuid.uuid4().hex[:8]}" for n in ("a", "b", "c"))
TENANTS = {SOURCE: new_tenant(), TARGET: new_tenant(), ERASING: new_tenant()}

ENTITIES = [
    {"name": "Ada", "entityType": "person", "observations": ["likes ramen", "lives in Oslo"]},
    {"name": "Oslo", "entityType": "city", "observations": []},
    {"name": "Acme", "entityType": "organisation", "observations": ["makes anvils"]},
]
RELATIONS = [
    {"from": "Ada", "to": "Oslo", "relationType": "lives_in"},
    {"from": "Ada", "to": "Acme", "relationType": "works_at"},
    {"from": "Acme", "to": "Oslo", "relationType": "based_in"},
]


@pytest.fixture(scope="module")
def url(stack: Stack) -> Iterator[str]:
    with serving(stack, TENANTS) as found:
        yield found


def items_of(gm: Graphmem) -> list[tuple[Any, ...]]:
    found, after = [], None
    while page := gm.store_items(after=after, first=2):  # pages of two: the cursor is used
        found += [(i.namespace, i.key, i.value, i.created_at, i.updated_at) for i in page]
        after = page[-1].namespace, page[-1].key
    return found


def graph_of(gm: Graphmem) -> tuple[list[Any], list[Any]]:
    entities, relations, after = [], [], None
    while True:
        page = gm.knowledge_graph(after=after, limit=2)
        entities += page.entities
        relations += page.relations
        if page.next is None:
            return entities, sorted(relations, key=lambda r: (r["from"], r["to"]))
        after = page.next


def cli(url: str, key: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMEM_")}
    env |= {"GRAPHMEM_URL": url, "GRAPHMEM_KEY": key}
    command = [sys.executable, "-m", "graphmem.ops.cli", *args]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_a_tenant_export_imported_into_a_fresh_tenant_gives_the_same_items_and_graph(
    url: str, tmp_path: Path
) -> None:
    with Graphmem(url, SOURCE) as source:
        source.put_items(
            [
                item_put(("users", "ada", "prefs"), "food", {"text": "Ada loves spicy ramen"}),
                item_put(("users", "ada", "prefs"), "drink", {"text": "black coffee", "n": 2}),
                item_put(("shared", "docs"), "anvils", {"text": "Acme's anvil catalogue"}),
                item_put(("shared",), "ünïcode", {"text": "ein Grüß", "list": [1, {"a": None}]}),
            ]
        )
        merged = source.merge_knowledge_graph(ENTITIES, RELATIONS)
        assert (merged.entities_created, merged.relations_created) == (3, 3)
        want_items, want_graph = items_of(source), graph_of(source)
    assert len(want_items) == 4 and len(want_graph[0]) == 3 and len(want_graph[1]) == 3

    path = tmp_path / "tenant.jsonl"
    done = cli(url, SOURCE, "export", "--out", str(path))
    assert done.returncode == 0, done.stderr
    assert "4 store items of the tenant, 3 knowledge-graph entities and 3 relations" in done.stderr
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["kind"] == "export" and lines[0]["version"] == 2
    kinds = [line["kind"] for line in lines[1:]]
    # every entity before any relation: an import meets both ends first
    assert kinds == ["item"] * 4 + ["kg_entity"] * 3 + ["kg_relation"] * 3
    assert not any("embedding" in line for line in lines)

    done = cli(url, TARGET, "import", str(path), "--quiet", "--wait", "0")
    assert done.returncode == 0, done.stderr
    assert "store items: written 4, already there 0" in done.stdout
    assert "knowledge graph: entities 3, observations 0, relations 3" in done.stdout
    with Graphmem(url, TARGET) as target:
        assert items_of(target) == want_items
        assert graph_of(target) == want_graph
        hits = target.search_items(("users", "ada"), query="spicy ramen", limit=1)
        assert [(h.namespace, h.key) for h in hits] == [(("users", "ada", "prefs"), "food")]

        # again: nothing changes, everything is "already there"
        report = import_file(target, path, progress=False)
        assert (report.graph.items, report.graph.items_held) == (0, 4)
        assert (report.graph.entities, report.graph.relations) == (0, 0)
        assert report.graph.observations == 0 and report.graph.graph_held == 6
        assert items_of(target) == want_items
        assert graph_of(target) == want_graph

        # a later put of a key is never undone by importing an older version of it
        target.put_items([item_put(("shared", "docs"), "anvils", {"text": "new catalogue"})])
        import_file(target, path, progress=False)
        newer = [i for i in items_of(target) if i[1] == "anvils"]
        assert newer[0][2] == {"text": "new catalogue"}


def test_bad_item_and_graph_lines_are_skipped_with_their_line_numbers(
    url: str, tmp_path: Path
) -> None:
    path = tmp_path / "bad.jsonl"
    good = {"kind": "item", "namespace": ["n"], "key": "k", "value": {"text": "fine"}}
    path.write_text(
        "\n".join(
            json.dumps(line)
            for line in [
                good,
                {"kind": "item", "namespace": ["n"], "key": "v", "value": "not an object"},
                {"kind": "item", "namespace": [], "key": "empty", "value": {}},
                {"kind": "kg_entity", "name": "X", "entityType": "thing", "observations": ["o"]},
                {"kind": "kg_entity", "name": "", "entityType": "thing", "observations": []},
                {"kind": "kg_relation", "from": "X", "to": "Nowhere", "relationType": "r"},
                {"kind": "kg_relation", "from": "X", "to": "X", "relationType": "self"},
            ]
        )
        + "\n"
    )
    with Graphmem(url, ERASING) as gm:
        report = import_file(gm, path, progress=False)
        reasons = {s.where: s.reason for s in report.skips}
        assert set(reasons) == {"line 2", "line 3", "line 5", "line 6"}, reasons
        assert "value must be an object" in reasons["line 2"]
        assert reasons["line 6"].startswith("kg_relation:") and "Nowhere" in reasons["line 6"]
        assert report.graph.items == 1 and report.graph.entities == 1
        assert report.graph.relations == 1


def test_an_item_of_a_user_erased_after_the_export_is_not_brought_back(
    url: str, tmp_path: Path
) -> None:
    with Graphmem(url, ERASING) as gm:
        gm.put_items(
            [
                item_put(("users", "bob", "prefs"), "food", {"text": "bob likes soup"}),
                item_put(("users", "cy", "prefs"), "food", {"text": "cy likes bread"}),
            ]
        )
        user_file, tenant_file = tmp_path / "bob.jsonl", tmp_path / "tenant.jsonl"
        with user_file.open("w") as out:
            assert export_user(gm, "bob", out).items == 1
        with tenant_file.open("w") as out:
            assert export_tenant(gm, out).items >= 2
        assert gm.forget_user("bob").receipt.clean
        for path in (user_file, tenant_file):
            report = import_file(gm, path, progress=False)
            assert report.erased == 1
        keys = [(i[0], i[1]) for i in items_of(gm)]
        assert (("users", "bob", "prefs"), "food") not in keys
        assert (("users", "cy", "prefs"), "food") in keys


async def test_the_asyncio_client_lists_items_and_merges_and_reads_the_graph(api: Api) -> None:
    from graphmem.client import AsyncGraphmem

    client = AsyncGraphmem("http://test", key=next(iter(api.keys.values())), http=api.client)
    await client.put_items([item_put(["notes", "a"], f"k{n}", {"n": n}) for n in range(3)])
    first = await client.store_items(["notes"], first=2)
    rest = await client.store_items(["notes"], after=(first[-1].namespace, first[-1].key))
    assert [i.key for i in first + rest] == ["k0", "k1", "k2"]
    entities = [{"name": n, "entityType": "city", "observations": [f"in {n}"]} for n in "XY"]
    relation = {"from": "X", "to": "Y", "relationType": "near"}
    merged = await client.merge_knowledge_graph(entities, [relation])
    assert (merged.entities_created, merged.relations_created) == (2, 1)
    again = await client.merge_knowledge_graph(entities, [relation])
    assert (again.entities_created, again.observations_added, again.relations_created) == (0, 0, 0)
    page = await client.knowledge_graph()
    assert sorted(e["name"] for e in page.entities) == ["X", "Y"]
    assert page.relations == [relation]
