"""The benchmarks' own Cypher (bench/cypher/), run against the Neo4j the settings name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphmem.settings import load_settings

CYPHER = Path(__file__).resolve().parents[1] / "cypher"


async def run_cypher(
    name: str, *, auto_commit: bool = False, **params: Any
) -> list[dict[str, Any]]:
    """``bench/cypher/<name>.cypher`` with ``params``, its rows as dicts. ``auto_commit``
    for a statement that commits as it goes (``CALL ... IN TRANSACTIONS``)."""
    from neo4j import AsyncGraphDatabase

    settings = load_settings()
    query = (CYPHER / f"{name}.cypher").read_text()
    driver = AsyncGraphDatabase.driver(
        settings.resolved_neo4j_uri, auth=(settings.neo4j_user, settings.neo4j_password)
    )
    try:
        if auto_commit:
            async with driver.session(database=settings.neo4j_database) as session:
                result = await session.run(query, params)
                return [r.data() async for r in result]
        records, _, _ = await driver.execute_query(query, params, database_=settings.neo4j_database)
        return [r.data() for r in records]
    finally:
        await driver.close()
