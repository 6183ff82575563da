"""Child JVMs in their own process groups, every one of them ended when the lab exits.

The machine is shared, so a scenario that fails half-way must not leave brokers behind: each child
starts a new session (its own process group), is registered here, and is killed - group and all,
after a SIGCONT in case a scenario paused it - by ``stop_all``, which runs at interpreter exit and
on SIGTERM/SIGINT/SIGHUP. Only the groups this process started are ever signalled.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

_LIVE: dict[int, "Child"] = {}
_LOCK = threading.Lock()
_INSTALLED = False


@dataclass
class Child:
    name: str
    popen: subprocess.Popen
    output: Path
    paused: bool = field(default=False)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def signal_group(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, sig)

    def pause(self) -> None:
        self.signal_group(signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        self.signal_group(signal.SIGCONT)
        self.paused = False

    def kill(self) -> None:
        """kill -9 of the whole group (a stopped process dies on SIGKILL too)."""
        self.signal_group(signal.SIGKILL)
        self.popen.wait()
        _forget(self)

    def terminate(self, timeout: float) -> bool:
        """SIGTERM (a broker's controlled shutdown), then SIGKILL after ``timeout``; True if it exited by itself."""
        if self.paused:
            self.resume()
        self.signal_group(signal.SIGTERM)
        try:
            self.popen.wait(timeout)
            clean = True
        except subprocess.TimeoutExpired:
            self.signal_group(signal.SIGKILL)
            self.popen.wait()
            clean = False
        _forget(self)
        return clean


def _forget(child: Child) -> None:
    with _LOCK:
        _LIVE.pop(child.pid, None)


def spawn(
    name: str, args: Sequence[str], output: Path, cwd: Optional[Path] = None, env: Optional[dict] = None
) -> Child:
    """Start ``args`` in a new process group, stdout and stderr to ``output``."""
    _install()
    output.parent.mkdir(parents=True, exist_ok=True)
    with open(output, "ab") as out:
        popen = subprocess.Popen(
            list(args),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
    child = Child(name, popen, output)
    with _LOCK:
        _LIVE[popen.pid] = child
    return child


def stop_all() -> None:
    """Kill every child still registered (idempotent)."""
    with _LOCK:
        children = list(_LIVE.values())
        _LIVE.clear()
    for child in children:
        child.signal_group(signal.SIGCONT)
        child.signal_group(signal.SIGKILL)
    deadline = time.monotonic() + 10
    for child in children:
        with contextlib.suppress(subprocess.TimeoutExpired):
            child.popen.wait(max(0.1, deadline - time.monotonic()))


def live() -> list[Child]:
    with _LOCK:
        return list(_LIVE.values())


def _on_signal(signum, frame) -> None:  # pragma: no cover - exercised by a killed run
    stop_all()
    raise SystemExit(128 + signum)


def _install() -> None:
    global _INSTALLED
    if _INSTALLED:
        return
    _INSTALLED = True
    atexit.register(stop_all)
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(sig) in (signal.SIG_DFL, None):
                signal.signal(sig, _on_signal)
