"""A real ``graphmem serve`` for a load program, and the clients that load it: the
server in a session of its own, keep-alive loopback connections that retry a refusal as
a client should, per-operation statistics, and pacing.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx
import psutil

from bench.lib.loadgen import (
    TRANSPORT_ERRORS,
    LoopbackClient,
    free_port,
    refused_for_now,
    retry_after_ms,
)
from bench.lib.report import ROOT
from bench.lib.stats import percentile

REQUEST_TIMEOUT = 30.0
METRICS_TOKEN = "soak-metrics-token"


class Server:
    """``graphmem serve`` in a session of its own (Ctrl-C in the terminal reaches only
    this program, which then stops the server in order)."""

    def __init__(
        self,
        keys: dict[str, str],
        log: Path,
        redis_db: int | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.keys = keys
        self.extra_env = env or {}
        self.redis_db = redis_db
        self.redis_url: str = (
            self.extra_env.get("REDIS_URL")
            or os.environ.get("REDIS_URL")
            or "redis://127.0.0.1:6379/0"
        )
        if redis_db is not None:
            url = urlsplit(self.redis_url)
            self.redis_url = urlunsplit(url._replace(path=f"/{redis_db}"))
        self.port = free_port()
        self.log_path = log
        self.proc: subprocess.Popen[bytes] | None = None
        self._procs: dict[int, psutil.Process] | None = None
        self._me = psutil.Process()

    def start(self, timeout: float = 120) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMEM_")}
        env |= {
            "GRAPHMEM_API_KEYS": ",".join(f"{k}={t}" for k, t in self.keys.items()),
            "GRAPHMEM_HOST": "127.0.0.1",
            "GRAPHMEM_PORT": str(self.port),
            "GRAPHMEM_WORKERS": "1",
            "GRAPHMEM_METRICS_TOKEN": METRICS_TOKEN,
        } | self.extra_env
        env["REDIS_URL"] = self.redis_url
        log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "graphmem.ops.cli", "serve"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"graphmem serve exited:\n{self.log_tail()}")
            try:
                if httpx.get(f"{self.url}/readyz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"graphmem serve did not become ready:\n{self.log_tail()}")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> int | None:
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(timeout=10)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def log_problems(self) -> list[str]:
        """Lines of the server log that report an error or a traceback."""
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return []
        return [
            line
            for line in text.splitlines()
            if "Traceback" in line or " ERROR" in line or line.startswith("ERROR")
        ]

    def api_memory(self) -> dict[str, float | None]:
        """What the API process's search cache holds, and its C heap's live and kept-free
        bytes (its ``/metrics``), in MB."""
        wanted = {
            "graphmem_search_cache_bytes": "search_cache_mb",
            'graphmem_heap_bytes{state="in_use"}': "heap_in_use_mb",
            'graphmem_heap_bytes{state="free"}': "heap_free_mb",
        }
        found: dict[str, float | None] = dict.fromkeys(wanted.values())
        try:
            text = httpx.get(
                f"http://127.0.0.1:{self.port}/metrics",
                headers={"Authorization": f"Bearer {METRICS_TOKEN}"},
                timeout=5,
            ).text
        except httpx.HTTPError:
            return found
        for line in text.splitlines():
            name, _, value = line.rpartition(" ")
            if name in wanted:
                found[wanted[name]] = round(float(value) / 2**20, 1)
        return found

    def resources(self) -> dict[str, float | None]:
        """RSS (the process and any children), descriptors, threads, and the CPU of the
        server and of this load generator since the last call (100% = one core)."""
        assert self.proc is not None
        if self._procs is None:
            root = psutil.Process(self.proc.pid)
            self._procs = {p.pid: p for p in [root, *root.children(recursive=True)]}
            self._me.cpu_percent(None)
            psutil.cpu_percent(None)
        procs = list(self._procs.values())
        return {
            "rss_mb": round(sum(p.memory_info().rss for p in procs) / 2**20, 1),
            "api_rss_mb": round(procs[0].memory_info().rss / 2**20, 1),
            **self.api_memory(),
            "fds": sum(p.num_fds() for p in procs),
            "threads": sum(p.num_threads() for p in procs),
            "cpu_percent": round(sum(p.cpu_percent(None) for p in procs), 1),
            "client_cpu_percent": round(self._me.cpu_percent(None), 1),
            "machine_cpu_percent": round(psutil.cpu_percent(None) * psutil.cpu_count(), 1),
        }


@dataclass
class Stats:
    """Latencies, requests and errors of the current window, and totals; a window reports
    the operations ``ops``."""

    ops: tuple[str, ...] = ()
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    requests: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)  # "op: code"
    events: Counter[str] = field(default_factory=Counter)  # kind
    total_requests: Counter[str] = field(default_factory=Counter)
    total_errors: Counter[str] = field(default_factory=Counter)
    total_events: Counter[str] = field(default_factory=Counter)
    error_examples: list[str] = field(default_factory=list)
    all_latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))

    def request(self, op: str, ms: float | None) -> None:
        self.requests[op] += 1
        self.total_requests[op] += 1
        if ms is not None:
            self.latencies[op].append(ms)
            self.all_latencies[op].append(ms)

    def error(self, op: str, code: str, detail: str = "") -> None:
        self.errors[f"{op}: {code}"] += 1
        self.total_errors[f"{op}: {code}"] += 1
        if len(self.error_examples) < 20:
            self.error_examples.append(f"{op}: {code} {detail[:300]}")

    def event(self, kind: str) -> None:
        self.events[kind] += 1
        self.total_events[kind] += 1

    def window(self) -> dict[str, Any]:
        ops = {
            op: {
                "requests": self.requests[op],
                "p50_ms": round(statistics.median(v), 2) if (v := self.latencies.get(op)) else None,
                "p99_ms": round(percentile(v, 0.99), 2) if v else None,
            }
            for op in self.ops
        }
        out = {"ops": ops, "errors": dict(self.errors), "events": dict(self.events)}
        self.latencies, self.requests = defaultdict(list), Counter()
        self.errors, self.events = Counter(), Counter()
        return out


#: times a refused request is sent again before the refusal counts as an error
REFUSALS_RETRIED = 5


class Conn:
    """One keep-alive loopback connection, reopened after any failure."""

    def __init__(self, server: Server, stats: Stats) -> None:
        self.server, self.stats = server, stats
        self.client: LoopbackClient | None = None

    async def close(self) -> None:
        if self.client is not None:
            client, self.client = self.client, None
            try:
                await client.__aexit__()
            except (OSError, RuntimeError):
                pass

    async def gql(
        self, op: str, key: str, query: str, variables: dict[str, Any] | None = None
    ) -> dict[str, Any] | None:
        """The response's data, or None (and an error recorded) for any failure; partial
        data with errors is returned too, the errors recorded. A refusal (RATE_LIMITED:
        the tenant is over its share of a busy server) is counted as an event and
        retried when it says, as a client should, ``REFUSALS_RETRIED`` times."""
        for _ in range(REFUSALS_RETRIED):
            answer = await self._once(op, key, query, variables)
            retry_ms = _refused(answer)
            if retry_ms is None:
                break
            self.stats.event(f"refused {op}")
            await asyncio.sleep(min(retry_ms, 5_000) / 1000)
        if answer is None:
            return None
        status, body, parsed = answer
        if status != 200:
            codes = error_codes(parsed) or ["-"]
            self.stats.error(op, f"HTTP {status} {codes[0]}", body[:300].decode(errors="replace"))
            return None
        if parsed.get("errors"):
            for code in error_codes(parsed):
                self.stats.error(op, code, json.dumps(parsed["errors"])[:300])
        data: dict[str, Any] | None = parsed.get("data")
        return data

    async def _once(
        self, op: str, key: str, query: str, variables: dict[str, Any] | None
    ) -> tuple[int, bytes, dict[str, Any]] | None:
        payload = {"query": query, "variables": variables or {}}
        started = time.perf_counter()
        try:
            if self.client is None:
                self.client = await LoopbackClient(
                    "127.0.0.1", self.server.port, "/graphql", {}
                ).__aenter__()
            self.client.headers = {"Authorization": f"Bearer {key}"}
            status, body = await asyncio.wait_for(self.client.post_json(payload), REQUEST_TIMEOUT)
        except TRANSPORT_ERRORS as exc:
            self.stats.request(op, None)
            self.stats.error(op, type(exc).__name__, str(exc))
            await self.close()
            return None
        self.stats.request(op, 1000 * (time.perf_counter() - started))
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = {}
        return status, body, parsed if isinstance(parsed, dict) else {}


def _refused(answer: tuple[int, bytes, dict[str, Any]] | None) -> int | None:
    """The retry delay (ms) of an answer that only refuses the request for now."""
    if answer is None or not refused_for_now(answer[2]):
        return None
    return retry_after_ms(answer[2], default=100)


def error_codes(answer: Any) -> list[str]:
    if not isinstance(answer, dict):
        return []
    return [
        str((e.get("extensions") or {}).get("code", "NO_CODE"))
        for e in answer.get("errors") or []
        if isinstance(e, dict)
    ]


async def paced(stop: asyncio.Event, interval: float, step: Callable[[], Awaitable[None]]) -> None:
    """``step`` every ``interval`` seconds (a random phase; no bursts to catch up)."""
    next_at = time.monotonic() + random.uniform(0, interval)
    while not stop.is_set():
        delay = next_at - time.monotonic()
        if delay > 0:
            try:
                await asyncio.wait_for(stop.wait(), delay)
                return
            except TimeoutError:
                pass
        await step()
        next_at = max(next_at + interval, time.monotonic())


async def wait_ready(url: str, server: subprocess.Popen[bytes], seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    async with httpx.AsyncClient() as http:
        while time.monotonic() < deadline:
            if server.poll() is not None:
                raise RuntimeError("graphmem serve exited")
            try:
                if (await http.get(f"{url}/readyz", timeout=1)).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.2)
    raise RuntimeError("graphmem serve did not become ready")
