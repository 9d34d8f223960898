"""Local Redis 7 (Debian's ``redis-server``) with the append-only file on."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from graphmem.errors import ConfigurationError
from graphmem.ops.devstack.process import alive, port_open, read_pid, spawn, stop_pid, wait_until
from graphmem.settings import Settings

REDIS_FIX = "install it with: apt-get install -y redis-server"

CLUSTER_NODE_TIMEOUT_MS = 3000


@dataclass
class RedisLauncher:
    settings: Settings
    #: a node of a Redis Cluster (``cluster.py``) on this port, under this directory
    cluster_port: int | None = None
    cluster_home: Path | None = None

    @property
    def home(self) -> Path:
        return (self.cluster_home or self.settings.home / "redis").resolve()

    @property
    def port(self) -> int:
        return self.cluster_port or self.settings.redis_port

    @property
    def pid_file(self) -> Path:
        return self.home / "redis.pid"

    @staticmethod
    def binary(install: bool = True) -> str:
        """The redis-server binary; installs Debian's package when missing and allowed."""
        found = shutil.which("redis-server")
        if found:
            return found
        if install and shutil.which("apt-get") and os.geteuid() == 0:
            for cmd in (
                ["apt-get", "update", "-qq"],
                ["apt-get", "install", "-y", "-qq", "redis-server"],
            ):
                subprocess.run(
                    cmd,
                    check=False,
                    capture_output=True,
                    env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
                )
            found = shutil.which("redis-server")
            if found:
                return found
        raise ConfigurationError(f"redis-server not found; {REDIS_FIX}")

    def conf_text(self) -> str:
        s = self.settings
        return "\n".join(
            [
                "# Written by `graphmem services up`; edits are overwritten on the next start.",
                "bind 127.0.0.1",
                "protected-mode yes",
                f"port {self.port}",
                "daemonize no",
                f"dir {self.home / 'data'}",
                f"pidfile {self.home / 'redis-server.pid'}",
                f"logfile {self.home / 'redis.log'}",
                "appendonly yes",
                f"appendfsync {s.redis_appendfsync}",
                "appendfilename appendonly.aof",
                "save 300 100",
                *(
                    [
                        "cluster-enabled yes",
                        "cluster-config-file nodes.conf",
                        # how long a master may be silent before its replica takes over
                        f"cluster-node-timeout {CLUSTER_NODE_TIMEOUT_MS}",
                        # a replica syncs at once instead of after Redis's default 5 s
                        "repl-diskless-sync-delay 0",
                    ]
                    if self.cluster_port
                    else []
                ),
                "",
            ]
        )

    def write_conf(self) -> Path:
        (self.home / "data").mkdir(parents=True, exist_ok=True)
        path = self.home / "redis.conf"
        path.write_text(self.conf_text())
        return path

    def running(self) -> bool:
        return alive(read_pid(self.pid_file))

    def ready(self) -> bool:
        return port_open("127.0.0.1", self.port)

    def start(self, timeout: float = 30.0) -> bool:
        if self.running():
            wait_until(self.ready, timeout, what="Redis")
            return False
        if port_open("127.0.0.1", self.port):
            raise ConfigurationError(
                f"port {self.port} is taken by another process (a system redis-server? "
                "`service redis-server stop`), or set GRAPHMEM_REDIS_PORT "
                "(GRAPHMEM_REDIS_CLUSTER_PORT for a cluster)"
            )
        binary = self.binary()
        conf = self.write_conf()
        pid = spawn([binary, str(conf)], self.home / "console.log", cwd=self.home)
        self.pid_file.write_text(f"{pid}\n")

        def up() -> bool:
            if not alive(pid):
                raise ConfigurationError(
                    "redis-server exited during start-up; see " + str(self.home / "redis.log")
                )
            return self.ready()

        wait_until(up, timeout, what="Redis")
        return True

    def stop(self, timeout: float = 30.0) -> bool:
        # SIGTERM makes Redis fsync the AOF and exit cleanly.
        stopped = stop_pid(read_pid(self.pid_file), timeout)
        self.pid_file.unlink(missing_ok=True)
        return stopped

    def kill(self) -> bool:
        """SIGKILL, for fault tests: whatever the AOF had not fsynced is lost."""
        stopped = stop_pid(read_pid(self.pid_file), 10, sig=signal.SIGKILL)
        self.pid_file.unlink(missing_ok=True)
        return stopped

    def status(self) -> dict[str, object]:
        return {
            "service": "redis",
            "pid": read_pid(self.pid_file) if self.running() else None,
            "running": self.running(),
            "url": f"redis://127.0.0.1:{self.port}/0",
            "ready": self.ready(),
            "appendfsync": self.settings.redis_appendfsync,
            "home": str(self.home),
        }
