"""graphmem.client is usable without the server's dependencies: it imports none of them."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def test_the_client_imports_nothing_of_the_server() -> None:
    probe = (
        "import sys, graphmem.client\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'graphmem', 'neo4j', 'redis', 'pydantic', 'strawberry', 'starlette', 'spacy'}"
        " and not m.startswith('graphmem.client')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "['graphmem']"
