"""Small process helpers shared by the local service launchers."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from graphmem.errors import ConfigurationError


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=timeout):
        return True
    return False


def port_free(host: str, port: int) -> bool:
    """Whether a server could listen on port now: nothing listens there, and no
    connection holds it as its own end."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def read_pid(pid_file: Path) -> int | None:
    try:
        return int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return None


def alive(pid: int | None) -> bool:
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child of ours still answers kill(0); reap it if it is ours.
    with contextlib.suppress(ChildProcessError):
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    return True


def wait_until(
    check: Callable[[], bool], timeout: float, interval: float = 0.25, what: str = "service"
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(interval)
    raise TimeoutError(f"{what} not ready after {timeout:.0f}s")


def spawn(argv: Sequence[str], log_file: Path, cwd: Path | None = None) -> int:
    """Start a detached process (own session, so Ctrl-C of the caller leaves it alone)."""
    log_file.parent.mkdir(parents=True, exist_ok=True)
    with log_file.open("ab") as out:
        proc = subprocess.Popen(
            list(argv),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=cwd,
            start_new_session=True,
        )
    return proc.pid


def stop_pid(pid: int | None, timeout: float = 60.0, sig: int = signal.SIGTERM) -> bool:
    """Signal a process and wait for it to exit; SIGKILL after ``timeout``."""
    if not alive(pid):
        return False
    assert pid is not None
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)
    try:
        wait_until(lambda: not alive(pid), timeout, what=f"exit of pid {pid}")
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        wait_until(lambda: not alive(pid), 10, what=f"exit of pid {pid}")
    return True


def require_binary(path: str | None, name: str, fix: str) -> str:
    if not path:
        raise ConfigurationError(f"{name} not found on PATH; {fix}")
    return path
