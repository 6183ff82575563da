"""Class-data sharing (CDS) for the local Spark driver JVM: load Spark's classes from an archive.

Why: on a small input most of a run's CPU is the JVM starting up, and much of that is loading,
parsing and verifying the ~15,000 classes Spark touches (``bench/RESULTS.md``, "First run").
The JVM can map them from a class-data-sharing archive instead (JDK 13+: a *dynamic* archive,
``-XX:ArchiveClassesAtExit`` at the end of one run, ``-XX:SharedArchiveFile`` afterwards). It
changes nothing but start-up: the same classes, the same JIT, the same peak speed.

How, for a JVM that ``build_session`` starts itself (never under spark-submit: that JVM is up):

- The archive lives in the user's private cache (``core/user_cache.py``: 0700, ours alone -
  the JVM maps it as code, so nobody else may write it) under a key of everything it depends on:
  the Java runtime (``libjvm.so``), Spark's jars (names, sizes, times) and what else can change
  the driver's classpath. The JVM checks the classpath itself and silently ignores an archive
  that does not fit, so a stale key costs speed, never correctness.
- Without an archive for the key, the run *trains*: its JVM dumps the classes it loaded to a
  temporary file when it exits. At the end of the command, ``finish`` closes the JVM, waits for
  the dump, checks it with ``java -Xshare:on`` (a JVM refuses a bad archive there instead of
  ignoring it) and only then renames it into place, with a sidecar recording its size and time.
  A truncated archive crashes the JVM that maps it, so an archive is used only when the sidecar
  still matches it. The first run on a machine pays the dump (a few seconds); every later run
  starts from the archive.
- ``KAFKA_FORENSICS_CACHE_DIR=off`` (no cache at all) or ``KAFKA_FORENSICS_JVM_ARCHIVE=off``
  switches it off.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from kafka_forensics.core.user_cache import private_dir, prune

SWITCH = "KAFKA_FORENSICS_JVM_ARCHIVE"
_KIND = "jvm"
_FORMAT = 1
_KEEP = 2  # archives kept (about 150 MB each): the current one and the one before an upgrade
_PARTIAL = ".jsa.partial"
# The dump lists every class it cannot archive (signed jars, pre-Java-6 bytecode) as a warning on
# stdout: hundreds of lines that say nothing to a user. Only the cds tags are silenced.
_QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
_STALE_PARTIAL_SECONDS = 3600  # a dump older than this was abandoned (its run was killed)
# What the launcher adds to the driver's classpath besides $SPARK_HOME/jars (bin/spark-class,
# launcher.AbstractCommandBuilder.buildClassPath).
_CLASSPATH_ENV = ("SPARK_CONF_DIR", "HADOOP_CONF_DIR", "YARN_CONF_DIR", "SPARK_DIST_CLASSPATH", "SPARK_CLASSPATH")


@dataclass(frozen=True)
class ArchivePlan:
    java_option: str  # added to spark.driver.extraJavaOptions
    archive: Path
    training: Optional[Path] = None  # where this run's JVM dumps its classes, None if it uses one


def _java_home() -> Optional[Path]:
    """The runtime bin/spark-class will start: $JAVA_HOME/bin/java, else ``java`` on the PATH."""
    java = Path(os.environ["JAVA_HOME"]) / "bin" / "java" if os.environ.get("JAVA_HOME") else None
    if java is None:
        found = shutil.which("java")
        java = Path(found) if found else None
    if java is None or not java.exists():
        return None
    return java.resolve().parent.parent


def _stat_text(path: Path) -> str:
    info = path.stat()
    return f"{path.name}:{info.st_size}:{info.st_mtime_ns}"


def archive_key(spark_home: Path, java_home: Path, conf: dict[str, str]) -> str:
    """A name for the archive of this Java runtime, these jars and this classpath."""
    digest = hashlib.sha256()
    parts = [str(_FORMAT), str(java_home), _stat_text(java_home / "lib" / "server" / "libjvm.so"), str(spark_home)]
    parts += sorted(_stat_text(jar) for jar in (spark_home / "jars").glob("*.jar"))
    parts += [f"{name}={os.environ.get(name, '')}" for name in _CLASSPATH_ENV]
    parts.append(conf.get("spark.driver.extraClassPath", ""))
    for part in parts:
        digest.update(part.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()[:32]


def _sidecar(archive: Path) -> Path:
    return archive.with_suffix(".json")


def _intact(archive: Path) -> bool:
    """The archive is there, regular, ours, and exactly as it was when it was checked."""
    try:
        info = os.lstat(archive)
        recorded = json.loads(_sidecar(archive).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (
        info.st_uid == os.getuid()
        and info.st_size == recorded.get("size")
        and info.st_mtime_ns == recorded.get("mtime_ns")
        and info.st_size > 0
    )


def plan(spark_home: Path, conf: dict[str, str]) -> Optional[ArchivePlan]:
    """The archive option for a driver JVM about to be started, or None (off, no cache, no Java)."""
    if os.environ.get(SWITCH, "").strip().lower() in ("off", "0", "false", "no"):
        return None
    java_home = _java_home()
    directory = private_dir(_KIND)
    if java_home is None or directory is None:
        return None
    try:
        key = archive_key(spark_home, java_home, conf)
    except OSError:
        return None
    archive = directory / f"spark-{key}.jsa"
    if _intact(archive):
        return ArchivePlan(f"-XX:SharedArchiveFile={archive} {_QUIET}", archive)
    _drop_abandoned(directory)
    training = directory / f".spark-{key}.{os.getpid()}{_PARTIAL}"
    return ArchivePlan(f"-XX:ArchiveClassesAtExit={training} {_QUIET}", archive, training)


def _drop_abandoned(directory: Path) -> None:
    now = time.time()
    for partial in directory.glob(f".*{_PARTIAL}"):
        try:
            if now - partial.stat().st_mtime > _STALE_PARTIAL_SECONDS:
                partial.unlink()
        except OSError:
            continue


def finish_at_exit(archive_plan: ArchivePlan, spark: Any) -> None:
    """For a training run: when the command ends, let the JVM dump its classes and keep the archive."""
    if archive_plan.training is None:
        return
    jvm = spark.sparkContext._jvm
    java = Path(str(jvm.System.getProperty("java.home"))) / "bin" / "java"
    classpath = str(jvm.System.getProperty("java.class.path"))
    process = spark.sparkContext._gateway.proc
    atexit.register(_finish, archive_plan, process, java, classpath)


def _finish(archive_plan: ArchivePlan, process: Any, java: Path, classpath: str) -> None:
    training = archive_plan.training
    assert training is not None
    try:
        from pyspark import SparkContext

        active = SparkContext._active_spark_context
        if active is not None:
            active.stop()  # first our side (its accumulator server must not see the JVM vanish)
        if process.stdin is not None:
            process.stdin.close()  # the gateway exits on EOF; the JVM dumps the archive as it exits
        if process.wait(timeout=300) == 0 and training.is_file() and _accepted(java, classpath, training):
            os.replace(training, archive_plan.archive)
            info = archive_plan.archive.stat()
            _sidecar(archive_plan.archive).write_text(
                json.dumps({"size": info.st_size, "mtime_ns": info.st_mtime_ns}), encoding="utf-8"
            )
            prune(archive_plan.archive.parent, _KEEP, "spark-*.jsa", companions=(".json",))
    except (OSError, subprocess.SubprocessError):
        pass
    finally:
        training.unlink(missing_ok=True)


def _accepted(java: Path, classpath: str, archive: Path) -> bool:
    """A JVM started with -Xshare:on maps the archive or refuses to start: only a good one passes."""
    check = [str(java), "-Xshare:on", f"-XX:SharedArchiveFile={archive}", "-cp", classpath, "-version"]
    return subprocess.run(check, capture_output=True, timeout=120).returncode == 0
