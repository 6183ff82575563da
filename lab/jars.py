"""Kafka's jars from Maven Central, cached outside the repository.

``lab/maven/pom.xml`` names, per release line, the broker and tools artifacts and the logging
binding of the release tarball; ``mvn dependency:copy-dependencies`` copies the whole runtime
classpath into ``~/.cache/kafka-forensics/lab/<version>/libs`` (``$KAFKA_FORENSICS_LAB_CACHE``
moves it). A ``.complete`` marker makes a half-copied directory count as missing.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

from kafka_forensics.core.errors import LabError, UsageError

from .releases import Target

POM = Path(__file__).resolve().parent / "maven" / "pom.xml"
MARKER = ".complete"


def cache_root() -> Path:
    env = os.environ.get("KAFKA_FORENSICS_LAB_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "kafka-forensics" / "lab"


@dataclass(frozen=True)
class Jars:
    version: str
    libs: Path
    seconds: float  # time spent resolving now (0 when cached)

    @property
    def classpath(self) -> str:
        return str(self.libs / "*")

    def has_class(self, name: str) -> bool:
        return name in _classes(self.libs)

    def first_class(self, candidates: Iterable[str]) -> str:
        """The first of ``candidates`` this release ships (tools moved between packages across releases)."""
        names = list(candidates)
        for name in names:
            if self.has_class(name):
                return name
        raise LabError(f"Kafka {self.version} ships none of {', '.join(names)} in {self.libs}")


@functools.lru_cache(maxsize=16)
def _classes(libs: Path) -> frozenset[str]:
    out: set[str] = set()
    for jar in libs.glob("*.jar"):
        with zipfile.ZipFile(jar) as z:
            out.update(n[:-6].replace("/", ".") for n in z.namelist() if n.endswith(".class") and "$" not in n)
    return frozenset(out)


def libs_dir(version: str) -> Path:
    return cache_root() / version / "libs"


def resolve_jars(target: Target, maven_repo: Optional[Path] = None) -> Jars:
    """The release's jars, resolved with Maven unless already cached."""
    libs = libs_dir(target.version)
    if (libs / MARKER).is_file():
        return Jars(target.version, libs, 0.0)
    mvn = shutil.which("mvn")
    if mvn is None:
        raise UsageError("the lab needs Maven (mvn) on PATH to resolve Kafka's jars from Maven Central")
    if libs.exists():
        shutil.rmtree(libs)
    cmd = [
        mvn,
        "-q",
        "-B",
        "-f",
        str(POM),
        "-P",
        target.release.profile,
        f"-Dkafka.version={target.version}",
        "dependency:copy-dependencies",
        f"-DoutputDirectory={libs}",
    ]
    if maven_repo is not None:
        cmd.append(f"-Dmaven.repo.local={maven_repo}")
    started = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.monotonic() - started
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-5:])
        raise LabError(f"mvn could not resolve Kafka {target.version} ({target.release.profile}): {tail}")
    (libs / MARKER).write_text(f"resolved in {seconds:.1f} s\n")
    return Jars(target.version, libs, seconds)
