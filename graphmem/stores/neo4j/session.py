"""The Neo4j driver behind every Neo4j store: connection, the named-query runner and the
mapping of driver failures to the service's errors.

Runs only the named statements of ``cypher/``, always with ``$tenant`` bound: writes
through the async driver's managed transactions (which retry transient failures), reads
in auto-commit transactions retried once.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator
from typing import Any, Self

import neo4j
from neo4j import AsyncDriver, AsyncGraphDatabase, RoutingControl
from neo4j.api import AsyncBookmarkManager
from neo4j.exceptions import (
    DriverError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
    TransientError,
)

from graphmem.errors import BadInput, GraphmemError, Unavailable
from graphmem.stores.neo4j.library import CypherLibrary

log = logging.getLogger("graphmem.stores")

#: Neo4j's verdicts on a value the request carried (a number out of range, a type a
#: property cannot hold): the client's mistake, reported without internals.
_VALUE_ERRORS = (
    "Neo.ClientError.Statement.TypeError",
    "Neo.ClientError.Statement.ArgumentError",
    "Neo.ClientError.Statement.ArithmeticError",
    "Neo.ClientError.Statement.ParameterNotProvided",
    "Neo.ClientError.Request.Invalid",
    "Neo.ClientError.Request.InvalidFormat",
)


def _mapped(name: str, exc: Exception) -> GraphmemError:
    """The client sees what kind of failure it was; the log has the query's name."""
    code = getattr(exc, "code", None)
    if code in _VALUE_ERRORS:
        log.warning("graph query %s refused a value: %s", name, exc)
        return BadInput("the graph store cannot hold a value of this request")
    log.error("graph query %s failed", name, exc_info=exc)
    return GraphmemError("the graph store could not complete the operation")


def _driver_failure(name: str, exc: Exception) -> GraphmemError:
    """A driver failure as the service's error: the graph out of reach, else ``_mapped``."""
    if isinstance(exc, ServiceUnavailable | SessionExpired | OSError):
        return Unavailable("the graph store (Neo4j) is unreachable")
    return _mapped(name, exc)


class _Rows(list[Any]):
    """A parameter as the driver sends it, whose ``repr`` does not spell out its content.
    The driver (neo4j 6.4) writes every RUN's parameters out with ``repr`` for a debug
    log before the log checks its level: for a batch of 500 memories with their vectors
    that was about 120 ms of CPU on the event loop, for a log no one reads. Packing
    treats these exactly as the built-in types they extend."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<{len(self)} items>"


class _Map(dict[str, Any]):
    __slots__ = ()

    def __repr__(self) -> str:
        return f"<map of {len(self)}>"


class _Blob(bytes):
    __slots__ = ()

    def __repr__(self) -> str:
        return f"<{len(self)} bytes>"


def _unspelled(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with each list, map and byte string behind a short ``repr`` (``_Rows``)."""
    out: dict[str, Any] = {}
    for key, value in params.items():
        if isinstance(value, list):
            value = _Rows(value)
        elif isinstance(value, dict):
            value = _Map(value)
        elif isinstance(value, bytes):
            value = _Blob(value)
        out[key] = value
    return out


class Neo4jSession:
    def __init__(
        self,
        driver: AsyncDriver,
        cypher: CypherLibrary,
        database: str = "neo4j",
        bookmarks: AsyncBookmarkManager | None = None,
    ):
        self._driver = driver
        self._cypher = cypher
        self._database = database
        # None: the driver's own manager, which chains this process's transactions
        self._options: dict[str, Any] = {"bookmark_manager_": bookmarks} if bookmarks else {}

    @classmethod
    def connect(
        cls,
        uri: str,
        user: str,
        password: str,
        cypher: CypherLibrary,
        database: str = "neo4j",
        bookmarks: AsyncBookmarkManager | None = None,
    ) -> Self:
        driver = AsyncGraphDatabase.driver(
            uri,
            auth=(user, password),
            max_connection_pool_size=50,
            # A pooled connection keeps its receive buffer at the size of the largest
            # message it ever received (a page of a scope's vectors, about half a MB).
            # Under a soak's load more and more connections got there and the API's
            # memory crept (tracemalloc: the driver's buffers were what grew); a
            # connection replaced after five minutes gives its buffer back.
            max_connection_lifetime=300.0,
            connection_acquisition_timeout=10.0,
            connection_timeout=5.0,
            # Managed transactions retry transient failures for this long; the service
            # adds its own backoff on top, and must not hang a request for the default 30s.
            max_transaction_retry_time=5.0,
            notifications_min_severity="OFF",  # schema-less warnings are noise here
        )
        return cls(driver, cypher, database, bookmarks)

    @property
    def bookmarks(self) -> AsyncBookmarkManager:
        """The bookmark manager this session's transactions chain through."""
        manager: AsyncBookmarkManager = self._options.get(
            "bookmark_manager_", self._driver.execute_query_bookmark_manager
        )
        return manager

    @property
    def cypher(self) -> CypherLibrary:
        return self._cypher

    async def close(self) -> None:
        await self._driver.close()

    async def run(self, name: str, params: dict[str, Any]) -> list[neo4j.Record]:
        """Run a named statement: in a write transaction when it writes, else in a read
        transaction (``CypherLibrary.writes``), so that through a ``neo4j://`` URI a
        cluster's secondaries serve every read."""
        query = self._cypher[name]
        writes = self._cypher.writes(name)
        params = _unspelled(params)
        try:
            if not writes:
                return await self._read(query, params)
            result = await self._driver.execute_query(
                query,
                params,
                database_=self._database,
                routing_=RoutingControl.WRITE if writes else RoutingControl.READ,
                **self._options,
            )
        except (ServiceUnavailable, SessionExpired, OSError, Neo4jError, DriverError) as exc:
            raise _driver_failure(name, exc) from exc
        except (ValueError, OverflowError) as exc:
            if not writes:
                raise
            # The driver's own refusal to send a value (an integer beyond 64 bits, an
            # offset in seconds, a lone surrogate): as a server's refusal, the value's
            # fault, not the service's.
            log.warning("graph query %s: the driver refused a value: %s", name, exc)
            raise BadInput("the graph store cannot hold a value of this request") from exc
        return list(result.records)

    async def _read(self, query: str, params: dict[str, Any]) -> list[neo4j.Record]:
        """A read in an auto-commit transaction: one round trip where a managed one takes
        two (its COMMIT), about a millisecond of a search's three reads in series. A
        read is safe to repeat, so it is retried once where the driver would retry it."""
        try:
            return await self._read_once(query, params)
        except (TransientError, SessionExpired):
            return await self._read_once(query, params)

    async def _read_once(self, query: str, params: dict[str, Any]) -> list[neo4j.Record]:
        async with self._read_session() as session:
            result = await session.run(query, params)
            return [record async for record in result]

    def _read_session(self) -> neo4j.AsyncSession:
        """A session for reads, which a cluster's secondaries may serve (``neo4j://``),
        each waiting for the writes this process's bookmarks chain."""
        return self._driver.session(
            database=self._database,
            default_access_mode=neo4j.READ_ACCESS,
            bookmark_manager=self.bookmarks,
        )

    async def stream(self, name: str, params: dict[str, Any]) -> AsyncGenerator[neo4j.Record, None]:
        """A read's records one at a time, as the driver takes each message off the wire:
        for reads whose records together are too large to hold at once (a whole scope's
        vectors). Retried once, like ``run``'s reads, while no record has been handed out."""
        if self._cypher.writes(name):
            raise ValueError(f"{name} writes: stream only reads")
        query, handed, params = self._cypher[name], False, _unspelled(params)
        for attempt in (1, 2):
            try:
                async with self._read_session() as session:
                    result = await session.run(query, params)
                    async for record in result:
                        handed = True
                        yield record
                return
            except (TransientError, SessionExpired) as exc:
                if handed or attempt == 2:
                    raise _driver_failure(name, exc) from exc
            except (ServiceUnavailable, OSError, Neo4jError, DriverError) as exc:
                raise _driver_failure(name, exc) from exc

    async def run_schema(self, statement: str, params: dict[str, Any]) -> None:
        """A schema command (from a ``cypher/`` file): these run outside data transactions."""
        try:
            await self._driver.execute_query(statement, params, database_=self._database)
        except (ServiceUnavailable, SessionExpired, OSError) as exc:
            raise Unavailable("the graph store (Neo4j) is unreachable") from exc
