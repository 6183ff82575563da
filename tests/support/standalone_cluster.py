"""A real Spark standalone cluster on loopback: one master and N workers, started from pyspark's own
``bin/spark-class`` (``org.apache.spark.deploy.master.Master`` / ``...worker.Worker``), as the
README's scale-out section does by hand.

Every port is chosen by the operating system (``--port 0``, ``--webui-port 0``) and read back
from the daemon's log, so parallel runs never collide; the master's REST submission server
(fixed port 6066) is switched off. Daemons get a small heap; each worker offers a fixed number
of cores and memory. Teardown is unconditional: every daemon is started in its own process
group (its executors and their Python workers are its children) and that group is terminated,
then killed if it lingers.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Optional

import pyspark

SPARK_HOME = Path(pyspark.__file__).resolve().parent
SPARK_CLASS = SPARK_HOME / "bin" / "spark-class"
START_TIMEOUT = 180.0  # seconds for a daemon to come up on a loaded 2-core machine
MASTER_URL = re.compile(r"Starting Spark master at (spark://[\w.\-]+:\d+)")
MASTER_READY = "I have been elected leader"
WORKER_READY = "Successfully registered with master"


class ClusterStartError(RuntimeError):
    """A daemon exited or did not come up in time; the message carries the end of its log."""


@dataclass
class Daemon:
    name: str
    process: subprocess.Popen
    log_path: Path
    lines: list[str] = field(default_factory=list)
    _reader: Optional[threading.Thread] = None

    def start_reading(self) -> None:
        def pump() -> None:
            assert self.process.stdout is not None
            with self.log_path.open("w", encoding="utf-8") as log:
                for raw in self.process.stdout:
                    line = raw.decode("utf-8", "replace")
                    self.lines.append(line)
                    log.write(line)
                    log.flush()

        self._reader = threading.Thread(target=pump, name=f"log-{self.name}", daemon=True)
        self._reader.start()

    def wait_for(self, pattern: re.Pattern | str, timeout: float = START_TIMEOUT) -> str:
        """The first log line matching ``pattern`` (waiting for it), or ClusterStartError."""
        deadline = time.monotonic() + timeout
        seen = 0
        while time.monotonic() < deadline:
            while seen < len(self.lines):
                line = self.lines[seen]
                seen += 1
                if pattern.search(line) if isinstance(pattern, re.Pattern) else pattern in line:
                    return line
            if self.process.poll() is not None:
                raise ClusterStartError(f"{self.name} exited {self.process.returncode}: {self.tail()}")
            time.sleep(0.1)
        raise ClusterStartError(f"{self.name} not ready after {timeout:.0f} s: {self.tail()}")

    def tail(self, lines: int = 15) -> str:
        return "".join(self.lines[-lines:])

    def stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)
        # executors (and their Python workers) of a worker killed mid-run stay in its group
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        if self._reader is not None:
            self._reader.join(timeout=10)


@dataclass
class StandaloneCluster:
    master_url: str
    master: Daemon
    workers: list[Daemon]
    work_dirs: list[Path]


def _daemon_env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_GATEWAY", "SPARK_CONF_DIR"))}
    env.update(
        {
            "SPARK_HOME": str(SPARK_HOME),
            "SPARK_LOCAL_IP": "127.0.0.1",  # bind the daemons and their web UIs to loopback only
            "SPARK_DAEMON_MEMORY": "256m",
            "SPARK_NO_DAEMONIZE": "1",
        }
    )
    env.update(extra)
    return env


def _start(name: str, args: list[str], root: Path, env: dict[str, str]) -> Daemon:
    process = subprocess.Popen(
        [str(SPARK_CLASS), *args],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: torn down as one
    )
    daemon = Daemon(name, process, root / f"{name}.log")
    daemon.start_reading()
    return daemon


@contextlib.contextmanager
def standalone_cluster(
    root: Path,
    workers: int = 2,
    cores: int = 1,
    memory: str = "1g",
    worker_env: Optional[dict[str, str]] = None,
) -> Iterator[StandaloneCluster]:
    """Start a master and ``workers`` workers under ``root``; stop them all on exit, whatever happened.

    ``worker_env`` is added to the workers' environment (their executors and Python workers inherit it)."""
    root.mkdir(parents=True, exist_ok=True)
    properties = root / "spark-defaults.conf"
    properties.write_text("spark.master.rest.enabled false\n", encoding="utf-8")
    daemons: list[Daemon] = []
    try:
        master = _start(
            "master",
            [
                "org.apache.spark.deploy.master.Master",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--webui-port",
                "0",
                "--properties-file",
                str(properties),
            ],
            root,
            _daemon_env({}),
        )
        daemons.append(master)
        found = MASTER_URL.search(master.wait_for(MASTER_URL))
        assert found is not None
        url = found.group(1)
        master.wait_for(MASTER_READY)
        work_dirs = []
        started = []
        for number in range(1, workers + 1):
            work_dir = root / f"worker-{number}"
            work_dir.mkdir(exist_ok=True)
            work_dirs.append(work_dir)
            worker = _start(
                f"worker-{number}",
                [
                    "org.apache.spark.deploy.worker.Worker",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    "0",
                    "--webui-port",
                    "0",
                    "--cores",
                    str(cores),
                    "--memory",
                    memory,
                    "--work-dir",
                    str(work_dir),
                    "--properties-file",
                    str(properties),
                    url,
                ],
                root,
                _daemon_env(worker_env or {}),
            )
            daemons.append(worker)
            started.append(worker)
        for worker in started:
            worker.wait_for(WORKER_READY)
        yield StandaloneCluster(url, master, started, work_dirs)
    finally:
        for daemon in reversed(daemons):
            daemon.stop()
