"""Input paths (files, directories, globs; local or any Hadoop filesystem) → the log files to read.

Listing goes through Hadoop's FileSystem API so ``hdfs://``, ``s3a://`` and local paths behave
the same. Only the file list reaches the driver, never file contents.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from pyspark.sql import SparkSession

from kafka_forensics.core.errors import InputError

# Kafka's appenders (config/log4j.properties, log4j2.yaml) and rotated names
# (DailyRollingFileAppender '.'yyyy-MM-dd-HH), .gz, and 4.0.0's misnamed "stage-change.log".
LOG_NAME = re.compile(r"^(?:state-change|stage-change|controller|server|kafka-[\w.-]*?)\.log(?:\.[\w.-]+)?$")
# kafka-dump-log --cluster-metadata-decoder output saved by the user (parsers/metadata_dump.py detects
# it by content; in directories only these names are picked up: "*.dump", "*metadata*.txt", + .gz).
DUMP_NAME = re.compile(r"(?i)^(?:.+\.dump|.*metadata.*\.txt)(?:\.gz)?$")
_GLOB = re.compile(r"[*?\[{]")
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


def discover(spark: SparkSession, inputs: list[str]) -> list[InputFile]:
    """Expand inputs; raise InputError naming the first input that does not exist or holds no logs."""
    if not inputs:
        raise InputError("no input given: name log files, directories or globs")
    jvm = spark.sparkContext._jvm
    hconf = spark.sparkContext._jsc.hadoopConfiguration()
    found: dict[str, InputFile] = {}
    for given in inputs:
        local = not _SCHEME.match(given) or given.startswith("file://")
        target = given
        if local and not given.startswith("file://"):
            target = os.path.abspath(given)
            if not _GLOB.search(given):
                if not os.path.exists(target):
                    raise InputError(f"input not found: {given}")
                if not os.access(target, os.R_OK):
                    raise InputError(f"input not readable (permission denied): {given}")
        path = jvm.org.apache.hadoop.fs.Path(target)
        fs = path.getFileSystem(hconf)
        try:
            statuses = fs.globStatus(path)
        except Exception as err:  # py4j error from an unreachable filesystem
            raise InputError(f"cannot list {given}: {err}") from err
        if statuses is None or len(statuses) == 0:
            raise InputError(f"input not found: {given}")
        before = len(found)
        for status in statuses:
            if status.isDirectory():
                walker = fs.listFiles(status.getPath(), True)
                while walker.hasNext():
                    child = walker.next()
                    name = child.getPath().getName()
                    if LOG_NAME.match(name) or DUMP_NAME.match(name):
                        uri = child.getPath().toString()
                        found.setdefault(uri, InputFile(uri, _display(uri, given), child.getLen()))
            else:
                uri = status.getPath().toString()
                found.setdefault(uri, InputFile(uri, _display(uri, given), status.getLen()))
        if len(found) == before:
            raise InputError(
                f"no Kafka log files under {given} (looked for state-change.log*, controller.log*, "
                f"server.log*, kafka-*.log*, metadata dumps *.dump / *metadata*.txt, plain or .gz)"
            )
    return sorted(found.values(), key=lambda f: f.display)
