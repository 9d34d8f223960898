"""Every named statement runs in the transaction its work needs: a write transaction
when it writes (a cluster's leader), a read transaction otherwise (which a cluster's
secondaries can serve through a ``neo4j://`` URI). The classification the session
routes by (``CypherLibrary.writes``) is checked against the query type Neo4j's own
planner reports for every file (EXPLAIN plans without running, without parameters)."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

from neo4j import READ_ACCESS, AsyncGraphDatabase, RoutingControl

from graphmem.stores.neo4j.library import library
from graphmem.stores.neo4j.session import Neo4jSession
from tests.conftest import Stack

PLANNER_WRITES = {"w", "rw", "s"}  # write, read-write, schema


async def test_the_library_classifies_every_statement_as_neo4j_plans_it(stack: Stack) -> None:
    lib = library()
    names = [n for n in lib.names() if not n.startswith("schema/")]
    logging.getLogger("neo4j").setLevel(logging.ERROR)  # missing-parameter notices
    driver = AsyncGraphDatabase.driver(
        stack.neo4j_uri,
        auth=(stack.neo4j_user, stack.neo4j_password),
        notifications_min_severity="OFF",
    )
    planned: dict[str, str] = {}
    async with driver:
        for name in names:
            async with driver.session() as session:
                result = await session.run(f"EXPLAIN {lib[name]}")  # type: ignore[arg-type]
                planned[name] = (await result.consume()).query_type or "?"
    wrong = {n: t for n, t in planned.items() if lib.writes(n) != (t in PLANNER_WRITES)}
    assert wrong == {}, f"classified unlike the planner: {wrong}"
    assert any(lib.writes(n) for n in names) and not all(lib.writes(n) for n in names)


class Recording:
    """A driver that records how each statement was routed: writes through
    ``execute_query``, reads through an auto-commit session's access mode."""

    execute_query_bookmark_manager = None

    def __init__(self) -> None:
        self.routed: dict[str, RoutingControl] = {}

    async def execute_query(self, query: str, params: Any, **options: Any) -> Any:
        self.routed[query] = options["routing_"]
        return SimpleNamespace(records=[])

    def session(self, **options: Any) -> RecordingSession:
        return RecordingSession(self, options["default_access_mode"])


class RecordingSession:
    def __init__(self, driver: Recording, mode: str) -> None:
        self.driver, self.mode = driver, mode

    async def __aenter__(self) -> RecordingSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def run(self, query: str, params: Any) -> Any:
        routed = RoutingControl.READ if self.mode == READ_ACCESS else RoutingControl.WRITE
        self.driver.routed[query] = routed
        return Empty()


class Empty:
    def __aiter__(self) -> Empty:
        return self

    async def __anext__(self) -> Any:
        raise StopAsyncIteration


async def test_the_session_routes_each_statement_by_what_it_does() -> None:
    lib = library()
    driver = Recording()
    session = Neo4jSession(driver, lib)  # type: ignore[arg-type]
    names = [n for n in lib.names() if not n.startswith("schema/")]
    for name in names:
        await session.run(name, {})
    for name in names:
        want = RoutingControl.WRITE if lib.writes(name) else RoutingControl.READ
        assert driver.routed[lib[name]] == want, name
