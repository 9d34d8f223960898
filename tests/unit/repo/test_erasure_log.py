"""The erasure receipts' log is append-only: no statement of the Cypher library sets,
removes or deletes an :ErasureReceipt, or MERGEs one (a MERGE may SET on match)."""

from __future__ import annotations

import re
from pathlib import Path

CYPHER = Path(__file__).resolve().parents[3] / "graphmem" / "stores" / "neo4j" / "cypher"
CHANGES = re.compile(r"\b(SET|REMOVE|DELETE|MERGE|FOREACH)\b")


def test_no_statement_changes_or_deletes_a_receipt() -> None:
    touching = {
        p.relative_to(CYPHER).as_posix(): p.read_text(encoding="utf-8")
        for p in CYPHER.rglob("*.cypher")
        if "ErasureReceipt" in p.read_text(encoding="utf-8")
    }
    assert "erasure/receipt_add.cypher" in touching
    for name, text in touching.items():
        code = "\n".join(line.split("//")[0] for line in text.splitlines())
        if name.startswith("schema/"):
            continue  # constraints and indexes
        assert not CHANGES.search(code), f"{name} may change or delete a receipt"
        # Every statement that names receipts stays in its tenant.
        assert "$tenant" in code, name
