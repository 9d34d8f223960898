"""docker-compose.yml describes the same stack as the local launcher."""

from __future__ import annotations

import re

import yaml

from graphmem.ops.devstack.neo4j import Neo4jLauncher
from graphmem.ops.devstack.redis import RedisLauncher
from graphmem.settings import Settings
from tests.conftest import ROOT


def defaults() -> Settings:
    """The built-in defaults, whatever the test environment exports (./dev test moves ports)."""
    return Settings.model_construct()


def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def default(value: str) -> str:
    """``${NAME:-default}`` → default."""
    match = re.fullmatch(r"\$\{[A-Z0-9_]+:-([^}]*)\}", value)
    return match.group(1) if match else value


def host_ports(service: dict) -> dict[int, tuple[str, int]]:
    out = {}
    for mapping in service["ports"]:
        host, host_port, container_port = mapping.split(":")
        out[int(container_port)] = (host, int(host_port))
    return out


def test_services_images_and_health_checks() -> None:
    services = compose()["services"]
    assert set(services) == {"neo4j", "redis", "graphmem"}
    assert services["neo4j"]["image"] == "neo4j:5.26-community"
    assert services["redis"]["image"].split(":")[1].startswith("7")
    assert services["graphmem"]["build"] == "."
    for name, service in services.items():
        assert "healthcheck" in service, name
    for dep in ("neo4j", "redis"):
        assert services["graphmem"]["depends_on"][dep]["condition"] == "service_healthy"


def test_ports_match_the_launcher_and_bind_loopback() -> None:
    s = defaults()
    services = compose()["services"]
    neo4j = host_ports(services["neo4j"])
    assert neo4j[7687] == ("127.0.0.1", s.neo4j_bolt_port)
    assert neo4j[7474] == ("127.0.0.1", s.neo4j_http_port)
    assert host_ports(services["redis"])[6379] == ("127.0.0.1", s.redis_port)
    assert host_ports(services["graphmem"])[8000] == ("127.0.0.1", s.port)
    conf = Neo4jLauncher(s).conf_text()
    assert f"server.bolt.listen_address=127.0.0.1:{s.neo4j_bolt_port}" in conf
    assert f"server.http.listen_address=127.0.0.1:{s.neo4j_http_port}" in conf
    assert "bind 127.0.0.1" in RedisLauncher(s).conf_text()


def test_neo4j_settings_match_the_launcher() -> None:
    s = defaults()
    env = compose()["services"]["neo4j"]["environment"]
    user, _, password = env["NEO4J_AUTH"].partition("/")
    assert user == s.neo4j_user
    assert default(password) == s.neo4j_password
    assert env["NEO4J_server_memory_heap_max__size"] == s.neo4j_heap
    assert env["NEO4J_server_memory_heap_initial__size"] == s.neo4j_heap
    assert env["NEO4J_server_memory_pagecache_size"] == s.neo4j_pagecache
    conf = Neo4jLauncher(s).conf_text()
    assert f"server.memory.pagecache.size={s.neo4j_pagecache}" in conf
    assert "dbms.usage_report.enabled=false" in conf
    assert env["NEO4J_dbms_usage__report_enabled"] == "false"


def test_redis_has_the_append_only_file_on() -> None:
    s = defaults()
    command = compose()["services"]["redis"]["command"]
    assert command[command.index("--appendonly") + 1] == "yes"
    assert command[command.index("--appendfsync") + 1] == s.redis_appendfsync
    conf = RedisLauncher(s).conf_text()
    assert "appendonly yes" in conf
    assert f"appendfsync {s.redis_appendfsync}" in conf


def test_graphmem_environment_points_at_the_compose_services() -> None:
    s = defaults()
    env = compose()["services"]["graphmem"]["environment"]
    assert env["NEO4J_URI"] == "bolt://neo4j:7687"
    assert env["REDIS_URL"] == "redis://redis:6379/0"
    assert env["NEO4J_USER"] == s.neo4j_user
    assert default(env["NEO4J_PASSWORD"]) == s.neo4j_password
    assert int(env["GRAPHMEM_PORT"]) == s.port
    # every variable the service reads exists in Settings under that name
    parsed = Settings(**{"NEO4J_URI": env["NEO4J_URI"], "REDIS_URL": env["REDIS_URL"]})
    assert parsed.resolved_neo4j_uri == "bolt://neo4j:7687"
    assert parsed.resolved_redis_url == "redis://redis:6379/0"


def test_dockerfile_installs_the_package_and_serves() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    # the Cypher library is package data (test_packaging.py): no copy beside it
    assert "COPY graphmem ./graphmem" in dockerfile
    assert "pip install '.[nlp]'" in dockerfile
    assert "GRAPHMEM_CYPHER_DIR" not in dockerfile
    assert 'CMD ["graphmem", "serve"]' in dockerfile
    assert "EXPOSE 8000" in dockerfile
