"""Shared fixtures. Integration tests talk to a real Neo4j and a real Redis, found in order:

1. ``NEO4J_URI`` and ``REDIS_URL`` from the environment (``./dev test`` sets them), with
   ``REDIS_CLUSTER=true`` when ``REDIS_URL`` names a node of a Redis Cluster (``./dev
   test`` runs the Redis tests a second time that way, against a local cluster);
2. testcontainers, when a Docker daemon answers;
3. otherwise the project's own launcher, on ports of its own under ``.graphmem/pytest``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis
from starlette.applications import Starlette

from graphmem.api.http.app import create_app
from graphmem.api.http.limits import FairTurns
from graphmem.memory import Memory
from graphmem.memory.builder import MemoryBuilder
from graphmem.settings import Settings
from graphmem.stores.redis.client import connect

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Stack:
    neo4j_uri: str
    redis_url: str
    neo4j_user: str
    neo4j_password: str
    origin: str
    redis_cluster: bool = False

    def settings(self, **overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "neo4j_uri": self.neo4j_uri,
            "redis_url": self.redis_url,
            "neo4j_user": self.neo4j_user,
            "neo4j_password": self.neo4j_password,
            "redis_cluster": self.redis_cluster,
        }
        values.update(overrides)
        return Settings(**values)

    def redis(self, url: str | None = None) -> Redis:
        """A client of the test's own for the stack's Redis (or cluster), decoding."""
        return connect(url or self.redis_url, self.redis_cluster)


def _docker_answers() -> bool:
    docker = shutil.which("docker")
    if not docker:
        return False
    try:
        return subprocess.run([docker, "info"], capture_output=True, timeout=5).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.fixture(scope="session")
def stack() -> Iterator[Stack]:
    user = os.environ.get("NEO4J_USER", "neo4j")
    password = os.environ.get("NEO4J_PASSWORD", "graphmem-dev")
    if os.environ.get("NEO4J_URI") and os.environ.get("REDIS_URL"):
        cluster = os.environ.get("REDIS_CLUSTER", "").lower() in ("1", "true", "yes")
        yield Stack(
            os.environ["NEO4J_URI"], os.environ["REDIS_URL"], user, password, "env", cluster
        )
        return
    if _docker_answers():
        try:
            from testcontainers.neo4j import Neo4jContainer
            from testcontainers.redis import RedisContainer
        except ImportError:
            pass
        else:
            with (
                Neo4jContainer("neo4j:5.26-community", password=password) as neo4j,
                RedisContainer("redis:7") as redis,
            ):
                redis_url = (
                    f"redis://{redis.get_container_host_ip()}:{redis.get_exposed_port(6379)}/0"
                )
                yield Stack(neo4j.get_connection_url(), redis_url, user, password, "docker")
            return
    from graphmem.ops.devstack import LocalStack

    settings = Settings(
        home=ROOT / ".graphmem" / "pytest",
        neo4j_lib_dir=ROOT / ".graphmem" / "neo4j-lib",
        neo4j_bolt_port=27687,
        neo4j_http_port=27474,
        redis_port=26379,
        neo4j_password=password,
    )
    local = LocalStack(settings)
    local.up()
    try:
        yield Stack(local.neo4j_uri, local.redis_url, user, password, "launcher")
    finally:
        local.down()


def new_tenant() -> str:
    return f"t-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def tenant() -> str:
    return new_tenant()


@pytest.fixture
async def service(stack: Stack) -> AsyncIterator[Memory]:
    svc = MemoryBuilder.from_settings(stack.settings()).build()
    await svc.migrate()
    try:
        yield svc
    finally:
        await svc.close()


@pytest.fixture
async def replica(stack: Stack) -> AsyncIterator[Memory]:
    """A second service, as another API replica would be."""
    svc = MemoryBuilder.from_settings(stack.settings()).build()
    try:
        yield svc
    finally:
        await svc.close()


@dataclass
class Api:
    """An in-process app over the real stack, with one key per test tenant."""

    client: httpx.AsyncClient
    keys: dict[str, str]  # tenant → key
    app: Starlette

    async def settle(self) -> None:
        """Wait for the automatic spills the adds so far started (an add returns without
        waiting for its spill)."""
        await self.app.state.service.spills.settle()

    async def gql(
        self,
        query: str,
        variables: dict[str, Any] | None = None,
        *,
        tenant: str | None = None,
        key: str | None = None,
    ) -> dict[str, Any]:
        response = await self.raw(query, variables, tenant=tenant, key=key)
        body: dict[str, Any] = response.json()
        return body

    async def raw(
        self,
        query: str,
        variables: dict[str, Any] | None = None,
        *,
        tenant: str | None = None,
        key: str | None = None,
    ) -> httpx.Response:
        token = key or self.keys[tenant or next(iter(self.keys))]
        return await self.client.post(
            "/graphql",
            json={"query": query, "variables": variables or {}},
            headers={"Authorization": f"Bearer {token}"},
        )

    async def data(
        self, query: str, variables: dict[str, Any] | None = None, *, tenant: str | None = None
    ) -> dict[str, Any]:
        body = await self.gql(query, variables, tenant=tenant)
        assert "errors" not in body, body
        data: dict[str, Any] = body["data"]
        return data


@asynccontextmanager
async def running(app: Starlette) -> AsyncIterator[Starlette]:
    """Run an app's lifespan in a task of its own: the lifespan holds anyio task groups
    (MCP sessions), which must be entered and exited by one task, while pytest sets up
    and tears down fixtures in different ones."""
    import asyncio

    started, stop = asyncio.Event(), asyncio.Event()

    async def host() -> None:
        async with app.router.lifespan_context(app):
            started.set()
            await stop.wait()

    task = asyncio.create_task(host())
    waiter = asyncio.create_task(started.wait())
    await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        waiter.cancel()
        task.result()  # raises the start-up error
    try:
        yield app
    finally:
        stop.set()
        await task


@pytest.fixture
async def api(
    stack: Stack, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> AsyncIterator[Api]:
    tenants = [new_tenant(), new_tenant()]
    keys = {t: f"key-{uuid.uuid4().hex}" for t in tenants}
    settings = stack.settings(api_keys={k: t for t, k in keys.items()})
    async with running(create_app(settings)) as app:
        # An explicit spill gives the app's enrichment worker a moment (1 s) to finish the
        # session's items before it writes them without, leaving entities to the jobs. The
        # worker shares database 0's queue with every earlier test's leftovers and, in CI,
        # the machine with the second lane: tests that read entities right after a spill
        # give it longer (test_visibility covers the short wait itself). A request's waits
        # share one allowance (waits.py, FairTurns.wait_allowance, 1 s), which caps this one
        # too: it is raised with it. Tests that time the server's answers (the fuzz test's
        # 20 s per request) keep its own bounds: @pytest.mark.production_waits.
        if request.node.get_closest_marker("production_waits") is None:
            app.state.service.spills.enrich_wait_seconds = 30.0
            monkeypatch.setattr(FairTurns, "wait_allowance", 30.0)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://graphmem") as client:
            yield Api(client, keys, app)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


#: the operator's token for GET /metrics in servers the tests start
METRICS_TOKEN = "metrics-token-for-tests"


@dataclass
class LiveApi:
    """A real uvicorn server on 127.0.0.1 (for MCP over HTTP and /metrics)."""

    url: str
    keys: dict[str, str]

    def headers(self, tenant: str | None = None) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.keys[tenant or next(iter(self.keys))]}"}

    async def gql(
        self, query: str, variables: dict[str, Any] | None = None, tenant: str | None = None
    ) -> dict[str, Any]:
        async with httpx.AsyncClient(base_url=self.url, timeout=60) as client:
            response = await client.post(
                "/graphql",
                json={"query": query, "variables": variables or {}},
                headers=self.headers(tenant),
            )
        body: dict[str, Any] = response.json()
        assert "errors" not in body, body
        data: dict[str, Any] = body["data"]
        return data


@pytest.fixture
async def live_api(stack: Stack) -> AsyncIterator[LiveApi]:
    import asyncio

    import uvicorn

    tenants = [new_tenant(), new_tenant()]
    keys = {t: f"key-{uuid.uuid4().hex}" for t in tenants}
    port = free_port()
    app = create_app(
        stack.settings(api_keys={k: t for t, k in keys.items()}, metrics_token=METRICS_TOKEN)
    )
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    task = asyncio.create_task(server.serve())
    while not server.started:
        assert not task.done(), "uvicorn exited during start-up"
        await asyncio.sleep(0.05)
    try:
        yield LiveApi(f"http://127.0.0.1:{port}", keys)
    finally:
        server.should_exit = True
        await task


def stack_env(stack: Stack, **extra: str) -> dict[str, str]:
    """The environment for a graphmem subprocess on the test stack (no stray GRAPHMEM_*)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMEM_")}
    env |= {
        "NEO4J_URI": stack.neo4j_uri,
        "REDIS_URL": stack.redis_url,
        "NEO4J_USER": stack.neo4j_user,
        "NEO4J_PASSWORD": stack.neo4j_password,
        "REDIS_CLUSTER": "true" if stack.redis_cluster else "false",
        # Servers share database 0, whose enrichment queue fills with every test's adds:
        # a worker per server would chew through all of it. Tests of write-behind start
        # their workers on a database of their own (test_visibility, test_worker_faults).
        "GRAPHMEM_ENRICH_WORKERS": "0",
    }
    return env | extra


@contextlib.contextmanager
def serving(stack: Stack, keys: dict[str, str], **env: str) -> Iterator[str]:
    """A real `graphmem serve` on the test stack with API ``keys`` (key → tenant): its URL,
    the server stopped afterwards."""
    port = free_port()
    api_keys = ",".join(f"{k}={t}" for k, t in keys.items())
    proc = start_server(stack_env(stack, GRAPHMEM_API_KEYS=api_keys, **env), port)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def receipt_verify(stack: Stack, path: Path, key: str) -> tuple[int, str]:
    """`graphmem receipt verify PATH` in a clean environment with the receipt key ``key``:
    its exit code and what it printed."""
    done = subprocess.run(
        [sys.executable, "-m", "graphmem.ops.cli", "receipt", "verify", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=stack_env(stack, GRAPHMEM_RECEIPT_KEY=key),
        timeout=60,
    )
    return done.returncode, (done.stdout + done.stderr).strip()


def mcp_stdio_params(api: LiveApi, stack: Stack) -> Any:
    """How an MCP client starts `graphmem mcp` over stdio with ``api``'s first key."""
    from mcp import StdioServerParameters

    tenant, key = next(iter(api.keys.items()))
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMEM_")} | {
        "NEO4J_URI": stack.neo4j_uri,
        "REDIS_URL": stack.redis_url,
        "NEO4J_PASSWORD": stack.neo4j_password,
        "GRAPHMEM_API_KEYS": f"{key}={tenant}",
        "GRAPHMEM_KEY": key,
    }
    return StdioServerParameters(
        command=sys.executable, args=["-m", "graphmem.ops.cli", "mcp"], env=env, cwd=str(ROOT)
    )


def start_server(env: dict[str, str], port: int, timeout: float = 60) -> subprocess.Popen[bytes]:
    """`graphmem serve` as a real process, returned once /readyz answers 200."""
    import time

    proc = subprocess.Popen(
        [sys.executable, "-m", "graphmem.ops.cli", "serve"],
        cwd=ROOT,
        env=env | {"GRAPHMEM_PORT": str(port)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            output = proc.stdout.read().decode(errors="replace") if proc.stdout else ""
            raise AssertionError(f"graphmem serve exited:\n{output[-3000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise AssertionError("graphmem serve did not become ready")


async def empty_redis_db(stack: Stack, db: int) -> str:
    """The URL of Redis database ``db`` of the test stack, emptied. For tests whose
    maintenance pass visits every tenant in Redis: in a database of their own, they
    neither flush nor spill what other tests left behind. Each such test has its own
    number (1 two API processes, 2 the second lane of `./dev test` (its default
    database), 3 noisy neighbours, 4 and 6 Redis layout and copy, 7
    faults, 5 the ingest bench's smoke, 8 poison, 9 tiers and replicas, 10 and 11
    visibility, 12 worker faults, 13 and 14 the soak bench, 15 the mixed bench).

    A Redis Cluster has database 0 only: there the whole cluster is emptied (``./dev
    test`` starts one for the cluster run alone, whose tests run one after another)."""
    from urllib.parse import urlsplit, urlunsplit

    if stack.redis_cluster:
        async with stack.redis() as client:
            await client.flushall(target_nodes="primaries")
        return stack.redis_url
    url = urlunsplit(urlsplit(stack.redis_url)._replace(path=f"/{db}"))
    async with stack.redis(url) as client:
        await client.flushdb()
    return url


async def run_cypher(stack: Stack, query: str, **params: Any) -> list[dict[str, Any]]:
    """A query of the test's own over Bolt, to look at the graph behind the API."""
    from neo4j import AsyncGraphDatabase

    driver = AsyncGraphDatabase.driver(
        stack.neo4j_uri, auth=(stack.neo4j_user, stack.neo4j_password)
    )
    async with driver:
        records, _, _ = await driver.execute_query(query, params)
    return [dict(r) for r in records]


@contextlib.contextmanager
def embed_calls(service: Memory) -> Iterator[list[int]]:
    """The batch sizes ``service``'s embedder is called with while the block runs (the
    embedder is shared by the process's services: it is restored afterwards)."""
    calls: list[int] = []
    embed = service.embedder.embed

    def counted(texts: Any) -> Any:
        calls.append(len(texts))
        return embed(texts)

    service.embedder.embed = counted  # type: ignore[method-assign]
    try:
        yield calls
    finally:
        service.embedder.embed = embed  # type: ignore[method-assign]
