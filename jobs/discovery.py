"""Input paths (files, directories, globs; local or any Hadoop filesystem) → the log files to read.

Listing goes through Hadoop's FileSystem API so ``hdfs://``, ``s3a://`` and local paths behave
the same. Only the file list reaches the driver, never file contents.
"""

from __future__ import annotations

import logging
import os
import re
import stat
from dataclasses import dataclass

from pyspark.sql import SparkSession

from kafka_forensics.core.errors import InputError, UsageError

# Kafka's appenders (config/log4j.properties, log4j2.yaml) and rotated names
# (DailyRollingFileAppender '.'yyyy-MM-dd-HH), .gz, and 4.0.0's misnamed "stage-change.log".
LOG_NAME = re.compile(r"^(?:state-change|stage-change|controller|server|kafka-[\w.-]*?)\.log(?:\.[\w.-]+)?$")
# kafka-dump-log --cluster-metadata-decoder output saved by the user (parsers/metadata_dump.py detects
# it by content; in directories only these names are picked up: "*.dump", "*metadata*.txt", + .gz).
DUMP_NAME = re.compile(r"(?i)^(?:.+\.dump|.*metadata.*\.txt)(?:\.gz)?$")
GLOB = re.compile(r"[*?\[{]")  # a glob character: the input is listed by Hadoop's globStatus
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")


@dataclass(frozen=True)
class InputFile:
    uri: str  # what Spark reads
    display: str  # what findings cite (the path as the user wrote it)
    size: int = 0  # bytes on disk (as listed), for sizing shuffles


def _display(uri: str, given: str) -> str:
    """The path findings cite: relative if the user gave a relative local path, else absolute."""
    if not uri.startswith("file:"):
        return uri
    path = uri[len("file:") :]
    if path.startswith("//"):
        path = path[2:]
    local_relative = not given.startswith(("/", "file:")) and not _SCHEME.match(given)
    return os.path.relpath(path) if local_relative else path


def discover(spark: SparkSession | None, inputs: list[str], notes: list[str] | None = None) -> list[InputFile]:
    """Expand inputs; raise InputError naming the first input that does not exist or holds no logs.

    Every file is read once, however many inputs name it (the same path twice, a glob and a name,
    a symbolic link and its target: local files are compared by device and inode). Local
    directories are walked here, following symbolic links but never into a directory that is
    already on the walk's path (a loop). What was skipped or read once is appended to ``notes``
    and logged as a warning (the ``kafka_forensics`` logger; on stderr by default).

    Plain local paths are listed here, as Hadoop's FileSystem would name them (``file:<absolute
    path>``); globs and URIs through Hadoop's, which needs ``spark`` (None: plain local paths only,
    for the driver engine)."""
    if not inputs:
        raise InputError("no input given: name log files, directories or globs")
    found: dict[object, InputFile] = {}  # file identity → the file as first named

    def note(text: str) -> None:
        _LOG.warning("kafka-forensics: note: %s", text)
        if notes is not None:
            notes.append(text)

    for given in inputs:
        local = not _SCHEME.match(given) or given.startswith("file://")
        if local and not given.startswith("file://") and not GLOB.search(given):
            # a plain local path: Hadoop's listing would name it file:<absolute path>; no JVM needed
            target = os.path.abspath(given)
            if not os.path.exists(target):
                raise InputError(f"input not found: {given}")
            if not os.access(target, os.R_OK):
                raise InputError(f"input not readable (permission denied): {given}")
            named = _local_files(target, "file:" + target, given, note)
        else:
            if spark is None:
                raise UsageError(f"{given}: globs and URIs are listed through Spark (Hadoop's FileSystem)")
            named = _hadoop_files(spark, given, local, note)
        if not named:
            raise InputError(
                f"no Kafka log files under {given} (looked for state-change.log*, controller.log*, "
                f"server.log*, kafka-*.log*, metadata dumps *.dump / *metadata*.txt, plain or .gz)"
            )
        new = 0
        for key, file in named:
            if key not in found:
                found[key] = file
                new += 1
        if new == 0:
            note(_already_read(given, named, found))
        elif new < len(named):
            note(f"{given}: {len(named) - new} of its {len(named)} files already read (each is read once)")
    return sorted(found.values(), key=lambda f: f.display)


_LOG = logging.getLogger("kafka_forensics")


def local_log_files(inputs: list[str]) -> list[str]:
    """The files ``discover`` reads for plain local ``inputs`` (no glob, no URI), each once, as paths on disk,
    without its notes and errors (a missing input lists nothing): what the engine choice sizes."""
    found: dict[object, str] = {}
    for given in inputs:
        target = os.path.abspath(given)
        try:
            named = _local_files(target, "file:" + target, given, lambda text: None)
        except InputError:
            continue
        for key, file in named:
            found.setdefault(key, file.uri[len("file:") :])
    return sorted(found.values())


def _is_log_name(name: str) -> bool:
    return bool(LOG_NAME.match(name) or DUMP_NAME.match(name))


def _already_read(given: str, named: list[tuple[object, InputFile]], found: dict[object, InputFile]) -> str:
    if len(named) > 1:
        return f"{given}: every file it names is already read"
    key, file = named[0]
    first = found[key]
    if first.uri == file.uri:
        return f"{given}: already read (named by an earlier input)"
    return f"{given}: already read as {first.display} (the same file)"


def _hadoop_files(spark: SparkSession, given: str, local: bool, note) -> list[tuple[object, InputFile]]:
    """(identity, file) of what a glob or a URI names, listed by Hadoop's FileSystem: local matches
    are walked as local files, remote directories recursively."""
    jvm = spark.sparkContext._jvm
    hconf = spark.sparkContext._jsc.hadoopConfiguration()
    target = os.path.abspath(given) if local and not given.startswith("file://") else given
    path = jvm.org.apache.hadoop.fs.Path(target)
    fs = path.getFileSystem(hconf)
    try:
        statuses = fs.globStatus(path)
    except Exception as err:  # py4j error from an unreachable filesystem
        raise InputError(f"cannot list {given}: {err}") from err
    if statuses is None or len(statuses) == 0:
        raise InputError(f"input not found: {given}")
    named: list[tuple[object, InputFile]] = []  # (identity, file) of every file this input names
    for status in statuses:
        if local:
            qualified = status.getPath()
            named += _local_files(qualified.toUri().getPath(), qualified.toString(), given, note)
        elif status.isDirectory():
            walker = fs.listFiles(status.getPath(), True)
            while walker.hasNext():
                child = walker.next()
                if _is_log_name(child.getPath().getName()):
                    uri = child.getPath().toString()
                    named.append((uri, InputFile(uri, _display(uri, given), child.getLen())))
        else:
            uri = status.getPath().toString()
            named.append((uri, InputFile(uri, _display(uri, given), status.getLen())))
    return named


def _local_files(root: str, qualified: str, given: str, note) -> list[tuple[object, InputFile]]:
    """(identity, file) of a local file, or of the log files under a local directory: walked in
    name order, following symbolic links, skipping (with a note) a link back to a directory on the
    current path, a directory already walked through another link, and a link that leads nowhere.
    ``root``: the path on disk; ``qualified``: the URI Hadoop's listing gives it (file:<root>)."""

    def make(path: str, info: os.stat_result) -> tuple[object, InputFile]:
        uri = qualified + path[len(root) :]
        return (info.st_dev, info.st_ino), InputFile(uri, _display(uri, given), info.st_size)

    try:
        top = os.stat(root)
    except OSError as err:
        raise InputError(f"cannot read {given}: {err.strerror}") from err
    if not stat.S_ISDIR(top.st_mode):
        return [make(root, top)]
    out: list[tuple[object, InputFile]] = []
    walked: dict[tuple[int, int], str] = {}

    def shown(path: str) -> str:
        return _display("file:" + path, given)

    def walk(directory: str, ancestors: dict[tuple[int, int], str]) -> None:
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as err:
            raise InputError(f"cannot list {shown(directory)}: {err.strerror}") from err
        for entry in entries:
            try:
                info = os.stat(entry.path)  # follows symbolic links
            except OSError as err:  # a link to nothing, or to itself
                note(f"skipped {shown(entry.path)}: cannot follow it ({err.strerror})")
                continue
            if stat.S_ISDIR(info.st_mode):
                key = (info.st_dev, info.st_ino)
                if key in ancestors:
                    note(f"skipped {shown(entry.path)}: symbolic link loop (back to {shown(ancestors[key])})")
                elif key in walked:
                    note(f"skipped {shown(entry.path)}: the same directory as {shown(walked[key])} (already read)")
                else:
                    walked[key] = entry.path
                    walk(entry.path, {**ancestors, key: entry.path})
            elif stat.S_ISREG(info.st_mode) and _is_log_name(entry.name):
                out.append(make(entry.path, info))

    walked[(top.st_dev, top.st_ino)] = root
    walk(root, {(top.st_dev, top.st_ino): root})
    return out
