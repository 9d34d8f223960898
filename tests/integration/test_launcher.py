"""The project's own launcher: a real Neo4j and Redis from a clean home, idempotent, clean stop."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from neo4j import GraphDatabase

from graphmem.ops.cli import main
from graphmem.ops.devstack import LocalStack
from graphmem.ops.devstack.neo4j import JVM_FLAGS, Neo4jLauncher
from graphmem.ops.devstack.process import port_open
from graphmem.settings import Settings
from tests.conftest import ROOT


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def own_settings(tmp_path: Path) -> Iterator[Settings]:
    settings = Settings(
        home=tmp_path / "stack",
        neo4j_lib_dir=ROOT / ".graphmem" / "neo4j-lib",
        neo4j_bolt_port=free_port(),
        neo4j_http_port=free_port(),
        redis_port=free_port(),
        neo4j_password="launcher-test-pw",
        neo4j_heap="512m",
        neo4j_pagecache="64m",
        redis_appendfsync="always",
    )
    yield settings
    LocalStack(settings).down()


def test_command_passes_the_jvm_flags_itself(own_settings: Settings) -> None:
    command = Neo4jLauncher(own_settings).command("java")
    for flag in (
        "--add-opens=java.base/java.nio=ALL-UNNAMED",
        "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
        "--add-opens=java.base/java.io=ALL-UNNAMED",
        "-Dio.netty.tryReflectionSetAccessible=true",
    ):
        assert flag in JVM_FLAGS and flag in command
    assert "org.neo4j.server.CommunityEntryPoint" in command
    assert "-Xmx512m" in command


def test_stack_starts_from_scratch_is_idempotent_and_stops(own_settings: Settings) -> None:
    stack = LocalStack(own_settings)
    stack.up()
    # Bolt answers with the configured password (the launcher replaced neo4j/neo4j)
    with GraphDatabase.driver(stack.neo4j_uri, auth=("neo4j", "launcher-test-pw")) as driver:
        records, _, _ = driver.execute_query(
            "CALL dbms.components() YIELD versions, edition RETURN versions[0] AS v, edition"
        )
        assert records[0]["v"].startswith("5.26.")
        assert records[0]["edition"] == "community"
    # Browser is served over HTTP on loopback
    import httpx

    page = httpx.get(f"http://127.0.0.1:{own_settings.neo4j_http_port}/browser/", timeout=10)
    assert page.status_code == 200 and "Neo4j Browser" in page.text
    # Redis runs with the append-only file on, as configured
    client = redis.Redis.from_url(stack.redis_url)
    assert client.config_get("appendonly") == {"appendonly": "yes"}
    assert client.config_get("appendfsync") == {"appendfsync": "always"}
    client.set("probe", "1")
    assert (own_settings.home / "redis" / "data").exists()

    pids = (stack.neo4j.status()["pid"], stack.redis.status()["pid"])
    stack.up()  # idempotent: nothing restarts
    assert (stack.neo4j.status()["pid"], stack.redis.status()["pid"]) == pids
    assert all(s["running"] and s["ready"] for s in stack.status())

    stack.down()
    assert not port_open("127.0.0.1", own_settings.neo4j_bolt_port)
    assert not port_open("127.0.0.1", own_settings.redis_port)
    assert not any(s["running"] for s in stack.status())
    stack.down()  # stopping a stopped stack is fine


def test_cli_status_exit_code_reflects_the_stack(
    own_settings: Settings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GRAPHMEM_HOME", str(own_settings.home))
    monkeypatch.setenv("GRAPHMEM_REDIS_PORT", str(own_settings.redis_port))
    monkeypatch.setenv("GRAPHMEM_NEO4J_BOLT_PORT", str(own_settings.neo4j_bolt_port))
    assert main(["services", "status"]) == 3
    assert "stopped" in capsys.readouterr().out


def test_a_taken_port_is_reported_not_clobbered(own_settings: Settings) -> None:
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", own_settings.redis_port))
        blocker.listen()
        from graphmem.errors import ConfigurationError

        with pytest.raises(ConfigurationError, match="taken by another process"):
            LocalStack(own_settings).redis.start()
