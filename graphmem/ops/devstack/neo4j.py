"""Local Neo4j 5.26 community server, resolved from Maven Central and run on Java 17.

``resolve()`` copies the jars that ``neo4j/pom.xml`` names into ``<home>/lib`` with
Maven (once per pom version). ``start()`` writes ``neo4j.conf`` and runs
``org.neo4j.server.CommunityEntryPoint`` with the JVM flags Neo4j's own launcher
would pass (the shell launcher reads ``server.jvm.additional``; we start the JVM
ourselves, so we pass them). Bolt and HTTP listen on 127.0.0.1 only.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from graphmem.errors import ConfigurationError
from graphmem.ops.devstack.process import (
    alive,
    port_open,
    read_pid,
    require_binary,
    spawn,
    stop_pid,
    wait_until,
)
from graphmem.settings import Settings

POM = Path(__file__).resolve().parent / "neo4j" / "pom.xml"
ENTRY_POINT = "org.neo4j.server.CommunityEntryPoint"

#: From the server.jvm.additional defaults of Neo4j 5.26's neo4j.conf. Without the
#: --add-opens, vector index population can stall (HNSW merges need DirectByteBuffer).
JVM_FLAGS = [
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields",
    "-XX:+DisableExplicitGC",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Djdk.tls.ephemeralDHKeySize=2048",
    "-Djdk.tls.rejectClientInitiatedRenegotiation=true",
    "-XX:FlightRecorderOptions=stackdepth=256",
    "-XX:+UnlockDiagnosticVMOptions",
    "-XX:+DebugNonSafepoints",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
    "-Dlog4j2.disable.jmx=true",
    "-Dlog4j.layout.jsonTemplate.maxStringLength=32768",
    "-Dfile.encoding=UTF-8",
]

JAVA_FIX = "install Java 17 or 21 (Debian: apt-get install -y openjdk-17-jre-headless)"
MAVEN_FIX = "install Maven (Debian: apt-get install -y maven)"


@dataclass
class Neo4jLauncher:
    settings: Settings

    @property
    def home(self) -> Path:
        return (self.settings.home / "neo4j").resolve()

    @property
    def _lib(self) -> Path:
        return self.settings.neo4j_lib_dir.resolve()

    @property
    def pid_file(self) -> Path:
        return self.home / "run" / "graphmem-neo4j.pid"

    @property
    def _console_log(self) -> Path:
        return self.home / "logs" / "console.log"

    # --- resolve ----------------------------------------------------------------------
    @staticmethod
    def java() -> str:
        java = require_binary(shutil.which("java"), "java", JAVA_FIX)
        out = subprocess.run([java, "-version"], capture_output=True, text=True, check=False)
        match = re.search(r'version "(\d+)', out.stderr + out.stdout)
        major = int(match.group(1)) if match else 0
        if major not in (17, 21):
            raise ConfigurationError(f"Neo4j 5.26 needs Java 17 or 21, found {major}; {JAVA_FIX}")
        return java

    def resolve(self) -> Path:
        """Copy Neo4j's jars into ``lib/`` (skipped when they match the pom already)."""
        digest = hashlib.sha256(POM.read_bytes()).hexdigest()
        marker = self._lib / ".resolved"
        if marker.is_file() and marker.read_text().strip() == digest:
            return self._lib
        mvn = require_binary(shutil.which("mvn"), "mvn", MAVEN_FIX)
        if self._lib.exists():
            shutil.rmtree(self._lib)
        self._lib.mkdir(parents=True)
        cmd = [
            mvn,
            "-q",
            "-B",
            "-f",
            str(POM),
            "dependency:copy-dependencies",
            f"-DoutputDirectory={self._lib}",
            "-DincludeScope=runtime",
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise ConfigurationError(
                "Maven could not resolve Neo4j from Maven Central:\n"
                + (done.stdout + done.stderr)[-2000:]
            )
        marker.write_text(digest + "\n")
        return self._lib

    # --- configure ----------------------------------------------------------------------
    def conf_text(self) -> str:
        s = self.settings
        return "\n".join(
            [
                "# Written by `graphmem services up`; edits are overwritten on the next start.",
                "server.default_listen_address=127.0.0.1",
                f"server.bolt.listen_address=127.0.0.1:{s.neo4j_bolt_port}",
                f"server.bolt.advertised_address=127.0.0.1:{s.neo4j_bolt_port}",
                "server.bolt.tls_level=DISABLED",
                "server.http.enabled=true",
                f"server.http.listen_address=127.0.0.1:{s.neo4j_http_port}",
                f"server.http.advertised_address=127.0.0.1:{s.neo4j_http_port}",
                "server.https.enabled=false",
                f"dbms.security.auth_enabled={'true' if s.neo4j_auth_enabled else 'false'}",
                f"server.directories.data={self.home / 'data'}",
                f"server.directories.logs={self.home / 'logs'}",
                f"server.directories.run={self.home / 'run'}",
                f"server.directories.plugins={self.home / 'plugins'}",
                f"server.directories.import={self.home / 'import'}",
                f"server.memory.pagecache.size={s.neo4j_pagecache}",
                f"server.memory.heap.initial_size={s.neo4j_heap}",
                f"server.memory.heap.max_size={s.neo4j_heap}",
                "dbms.usage_report.enabled=false",
                "db.tx_log.rotation.retention_policy=1 days",
                "",
            ]
        )

    def _write_conf(self) -> Path:
        conf_dir = self.home / "conf"
        conf_dir.mkdir(parents=True, exist_ok=True)
        for sub in ("data", "logs", "run", "plugins", "import"):
            (self.home / sub).mkdir(parents=True, exist_ok=True)
        path = conf_dir / "neo4j.conf"
        path.write_text(self.conf_text())
        return path

    def command(self, java: str) -> list[str]:
        heap = self.settings.neo4j_heap
        return [
            java,
            f"-Xms{heap}",
            f"-Xmx{heap}",
            *JVM_FLAGS,
            "-cp",
            f"{self._lib}/*:{self.home / 'plugins'}/*",
            ENTRY_POINT,
            f"--home-dir={self.home}",
            f"--config-dir={self.home / 'conf'}",
            "--console-mode",
        ]

    # --- lifecycle ------------------------------------------------------------------------
    def running(self) -> bool:
        return alive(read_pid(self.pid_file))

    def _ready(self) -> bool:
        return port_open("127.0.0.1", self.settings.neo4j_bolt_port) and port_open(
            "127.0.0.1", self.settings.neo4j_http_port
        )

    def start(self, timeout: float = 180.0) -> bool:
        """Start (idempotent); returns False when it was already running."""
        if self.running():
            wait_until(self._ready, timeout, what="Neo4j")
            return False
        for port in (self.settings.neo4j_bolt_port, self.settings.neo4j_http_port):
            if port_open("127.0.0.1", port):
                raise ConfigurationError(
                    f"port {port} is taken by another process; stop it or set "
                    "GRAPHMEM_NEO4J_BOLT_PORT / GRAPHMEM_NEO4J_HTTP_PORT"
                )
        java = self.java()
        self.resolve()
        self._write_conf()
        fresh = not any((self.home / "data").iterdir())
        pid = spawn(self.command(java), self._console_log, cwd=self.home)
        self.pid_file.write_text(f"{pid}\n")

        def up() -> bool:
            if not alive(pid):
                tail = self._console_log.read_text(errors="replace")[-3000:]
                raise ConfigurationError(f"Neo4j exited during start-up:\n{tail}")
            return self._ready()

        wait_until(up, timeout, interval=0.5, what="Neo4j")
        self._wait_for_queries(initial_password=fresh and self.settings.neo4j_auth_enabled)
        return True

    def _wait_for_queries(self, initial_password: bool, timeout: float = 60.0) -> None:
        """Wait until the configured user can run queries. On a fresh database, first
        replace Neo4j's initial neo4j/neo4j password with the configured one."""
        from neo4j import GraphDatabase
        from neo4j.exceptions import Neo4jError, ServiceUnavailable

        from graphmem.stores.neo4j.library import library

        cypher = library()
        s = self.settings
        uri = f"bolt://127.0.0.1:{s.neo4j_bolt_port}"
        deadline = time.monotonic() + timeout
        changed = not initial_password
        tried_initial = initial_password
        unauthorized = 0
        while True:
            try:
                if not changed:
                    with GraphDatabase.driver(uri, auth=(s.neo4j_user, "neo4j")) as driver:
                        driver.execute_query(
                            cypher["admin/change_initial_password"],
                            {"password": s.neo4j_password},
                            database_="system",
                        )
                    changed = True
                with GraphDatabase.driver(uri, auth=(s.neo4j_user, s.neo4j_password)) as driver:
                    driver.execute_query(cypher["admin/ping"], database_=s.neo4j_database)
                return
            except (Neo4jError, ServiceUnavailable, OSError) as exc:
                unauthorized += getattr(exc, "code", "") == "Neo.ClientError.Security.Unauthorized"
                if unauthorized == 3 and not tried_initial:
                    # An earlier first start may have stopped before changing the password.
                    changed, tried_initial = False, True
                # Bolt opens before the databases and the auth provider are ready.
                if time.monotonic() > deadline:
                    raise ConfigurationError(f"Neo4j did not accept queries: {exc}") from exc
                time.sleep(1.0)

    def stop(self, timeout: float = 60.0) -> bool:
        stopped = stop_pid(read_pid(self.pid_file), timeout)
        self.pid_file.unlink(missing_ok=True)
        return stopped

    def kill(self) -> bool:
        """SIGKILL, for fault tests: no clean shutdown, recovery on next start."""
        import signal

        stopped = stop_pid(read_pid(self.pid_file), 10, sig=signal.SIGKILL)
        self.pid_file.unlink(missing_ok=True)
        return stopped

    def status(self) -> dict[str, object]:
        return {
            "service": "neo4j",
            "pid": read_pid(self.pid_file) if self.running() else None,
            "running": self.running(),
            "bolt": f"bolt://127.0.0.1:{self.settings.neo4j_bolt_port}",
            "browser": f"http://127.0.0.1:{self.settings.neo4j_http_port}/browser/",
            "ready": self._ready(),
            "home": str(self.home),
        }
