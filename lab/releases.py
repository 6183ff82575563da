"""The Kafka release lines the lab can run: Maven profile, modes, log4j file and JDK.

A release line is named like the project's dialects (``3.9``, ``2.4``...); ``--kafka 3.9.1`` picks
a patch release of the line (Maven's ``-Dkafka.version``). Which lines *ran* on this machine, and
the exact error of those that did not, is measured by ``kafka-forensics lab probe`` and written in
lab/README.md.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from kafka_forensics.core.errors import UsageError

from .log4j import STOCK, StockConfig

ZOOKEEPER, KRAFT = "zookeeper", "kraft"
MODES = (ZOOKEEPER, KRAFT)

JAVA_17 = "/usr/lib/jvm/java-17-openjdk-amd64"
TEMURIN_25 = "/usr/lib/jvm/temurin-25-jdk-amd64"


@dataclass(frozen=True)
class Release:
    line: str  # "3.9"
    version: str  # default patch release of the line
    scala: str  # the kafka_<scala> artifact
    modes: tuple[str, ...]
    log4j: StockConfig
    # the options of kafka-topics: --bootstrap-server from 2.2 (KIP-377), --zookeeper before
    topics_via_zookeeper: bool = False
    # kafka-leader-election (KIP-460) from 2.4; PreferredReplicaLeaderElectionCommand before
    has_leader_election_tool: bool = True
    # kafka-reassign-partitions --bootstrap-server from 2.5 (KIP-455); --zookeeper before
    reassign_via_zookeeper: bool = False

    @property
    def profile(self) -> str:
        return f"kafka-{self.line}"


RELEASES: dict[str, Release] = {
    r.line: r
    for r in (
        Release(
            "0.10",
            "0.10.2.2",
            "2.12",
            (ZOOKEEPER,),
            STOCK["0.10"],
            topics_via_zookeeper=True,
            has_leader_election_tool=False,
            reassign_via_zookeeper=True,
        ),
        Release(
            "1.1",
            "1.1.1",
            "2.12",
            (ZOOKEEPER,),
            STOCK["1.1"],
            topics_via_zookeeper=True,
            has_leader_election_tool=False,
            reassign_via_zookeeper=True,
        ),
        Release("2.4", "2.4.1", "2.12", (ZOOKEEPER,), STOCK["2.4"], reassign_via_zookeeper=True),
        Release("2.8", "2.8.2", "2.13", (ZOOKEEPER,), STOCK["2.8"]),
        Release("3.9", "3.9.1", "2.13", (ZOOKEEPER, KRAFT), STOCK["3.9"]),
        Release("4.1", "4.1.1", "2.13", (KRAFT,), STOCK["4.x"]),
    )
}

_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+)(?:\.(\d+))?)?$")


@dataclass(frozen=True)
class Target:
    """One concrete release to run: the line, the exact version, the mode."""

    release: Release
    version: str
    mode: str

    @property
    def name(self) -> str:
        return f"{self.version}-{self.mode}"


def resolve(text: str, mode: Optional[str] = None) -> Target:
    """``3.9`` / ``3.9.1`` (+ mode) -> the release to run; a mode the release lacks is a usage error."""
    m = _VERSION.match(text.strip())
    if not m:
        raise UsageError(f"--kafka {text!r} is not a Kafka version (like 3.9 or 3.9.1)")
    line = f"{m.group(1)}.{m.group(2)}"
    release = RELEASES.get(line)
    if release is None:
        raise UsageError(f"the lab knows Kafka {', '.join(RELEASES)}, not {text!r}")
    version = text.strip() if m.group(3) is not None else release.version
    mode = mode or release.modes[0]
    if mode not in release.modes:
        raise UsageError(f"Kafka {line} runs in {' or '.join(release.modes)} mode, not {mode}")
    return Target(release, version, mode)


def java_home() -> str:
    """``$KAFKA_FORENSICS_LAB_JAVA_HOME``, else the machine's Java 17, else ``$JAVA_HOME``."""
    for candidate in (os.environ.get("KAFKA_FORENSICS_LAB_JAVA_HOME"), JAVA_17, os.environ.get("JAVA_HOME")):
        if candidate and (Path(candidate) / "bin" / "java").is_file():
            return candidate
    return ""


def java_binary(home: Optional[str] = None) -> str:
    home = home if home is not None else java_home()
    return str(Path(home) / "bin" / "java") if home else "java"
