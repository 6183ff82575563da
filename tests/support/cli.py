"""The installed ``kafka-forensics`` command in a process of its own, as a user runs it.

In-process (``CliRunner``) a command sees the suite's running Spark session and keeps Spark
(``jobs/engine.py``); a fresh process chooses as a user's command does. ``without_a_jvm`` also points
``JAVA_HOME`` nowhere: a Spark start then fails at once (exit 3, ``JAVA_GATEWAY_EXITED``), so a command that
succeeds there ran on the driver engine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Mapping

# what would make a fresh command join a running JVM, pick another master, or print for a terminal
_INHERITED = ("PYSPARK_GATEWAY_PORT", "PYSPARK_GATEWAY_SECRET", "KAFKA_FORENSICS_MASTER", "COLUMNS", "FORCE_COLOR")


def _run(args: list[str], env: Mapping[str, str]) -> subprocess.CompletedProcess:
    beside = Path(sys.executable).parent / "kafka-forensics"
    command = str(beside) if beside.exists() else shutil.which("kafka-forensics")
    assert command, "the kafka-forensics command is not installed"
    return subprocess.run([command, *args], capture_output=True, text=True, env=dict(env), timeout=300)


def installed_cli(args: list[str], **env: str) -> subprocess.CompletedProcess:
    """The installed command (its own JVM, if it starts one; its real stderr)."""
    return _run(args, {**os.environ, **env})


def without_a_jvm(args: list[str]) -> subprocess.CompletedProcess:
    """The installed command where no JVM can start: it succeeds only on the driver engine."""
    env = {k: v for k, v in os.environ.items() if k not in _INHERITED}
    return _run(args, {**env, "JAVA_HOME": "/nonexistent/java-home"})  # spark-class runs $JAVA_HOME/bin/java
