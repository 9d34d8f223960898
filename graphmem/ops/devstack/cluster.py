"""A local Redis Cluster for development and tests: 3 masters and 3 replicas of Debian's
``redis-server`` on consecutive ports from ``redis_cluster_port``, each with its
append-only file on, created with ``redis-cli --cluster create``."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from graphmem.errors import ConfigurationError
from graphmem.ops.devstack.process import wait_until
from graphmem.ops.devstack.redis import REDIS_FIX, RedisLauncher
from graphmem.settings import Settings

MASTERS = 3
REPLICAS_PER_MASTER = 1


@dataclass
class RedisClusterLauncher:
    settings: Settings
    nodes: list[RedisLauncher] = field(init=False)

    def __post_init__(self) -> None:
        self.nodes = [
            RedisLauncher(self.settings, cluster_port=port, cluster_home=self.home / str(port))
            for port in self.ports
        ]

    @property
    def home(self) -> Path:
        return (self.settings.home / "redis-cluster").resolve()

    @property
    def ports(self) -> list[int]:
        first = self.settings.redis_cluster_port
        return list(range(first, first + MASTERS * (1 + REPLICAS_PER_MASTER)))

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.ports[0]}/0"

    def cli(self, *args: str, port: int | None = None) -> str:
        binary = shutil.which("redis-cli")
        if binary is None:
            raise ConfigurationError(f"redis-cli not found; {REDIS_FIX}")
        done = subprocess.run(
            [binary, "-p", str(port or self.ports[0]), *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        return done.stdout + done.stderr

    def unhealthy(self) -> str | None:
        """Why the cluster cannot serve yet, or None once every slot is served, every
        node agrees, and every replica is in sync with its master (a replica that never
        synced cannot take over when its master dies)."""
        for port in self.ports:
            info = self.cli("cluster", "info", port=port)
            if "cluster_state:ok" not in info:
                facts = [
                    line
                    for line in info.splitlines()
                    if line.startswith(("cluster_state", "cluster_slots_ok", "cluster_known"))
                ]
                return f"node {port}: {', '.join(facts) or info.strip()[-200:]}"
            replication = self.cli("info", "replication", port=port)
            if "role:slave" in replication and "master_link_status:up" not in replication:
                return f"replica {port}: not in sync with its master yet"
        return None

    def healthy(self) -> bool:
        return self.unhealthy() is None

    def running(self) -> bool:
        return all(node.running() for node in self.nodes)

    def start(self, timeout: float = 60.0) -> bool:
        started = False
        for node in self.nodes:
            started = node.start() or started
        # Nodes that met before find each other again from their nodes.conf; only
        # nodes that know no one else are a cluster still to create.
        if all(
            "cluster_known_nodes:1\n" in self.cli("cluster", "info", port=p) for p in self.ports
        ):
            self._create()
        try:
            wait_until(self.healthy, timeout, what="Redis Cluster")
        except TimeoutError:
            # Say which node and why: a cluster that never settles is otherwise a bare
            # timeout, with the nodes' logs gone with a temporary home.
            raise TimeoutError(
                f"Redis Cluster not ready after {timeout:.0f}s: {self.unhealthy()}; "
                f"logs under {self.home}"
            ) from None
        return started

    def _create(self) -> None:
        out = self.cli(
            "--cluster",
            "create",
            *(f"127.0.0.1:{p}" for p in self.ports),
            "--cluster-replicas",
            str(REPLICAS_PER_MASTER),
            "--cluster-yes",
        )
        if "[OK] All 16384 slots covered" not in out:
            raise ConfigurationError(f"redis-cli --cluster create failed:\n{out[-2000:]}")

    def stop(self, timeout: float = 30.0) -> bool:
        stopped = False
        for node in self.nodes:
            stopped = node.stop(timeout) or stopped
        return stopped

    def masters(self) -> list[int]:
        """The ports of the nodes serving slots now (replicas promoted by a failover
        included)."""
        found: list[int] = []
        live = next((n.port for n in self.nodes if n.ready()), self.ports[0])
        for line in self.cli("cluster", "nodes", port=live).splitlines():
            parts = line.split()
            if len(parts) > 8 and "master" in parts[2] and "fail" not in parts[2]:
                found.append(int(parts[1].split("@")[0].rsplit(":", 1)[1]))
        return sorted(found)

    def status(self) -> dict[str, object]:
        return {
            "service": "redis-cluster",
            "running": self.running(),
            "url": self.url,
            "ports": self.ports,
            "masters": self.masters() if self.running() else [],
            "appendfsync": self.settings.redis_appendfsync,
            "home": str(self.home),
        }
