"""Small files next to the tables (summaries, JSONL) on any Hadoop filesystem."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: ``absolute`` serves the replay in the driver, which runs without pyspark
    from pyspark.sql import SparkSession

_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*):")


def scheme_of(path: str) -> str | None:
    """The URI scheme ``path`` starts with (``hdfs``, ``s3a``, ``file``), lower-cased; None for a plain path."""
    found = _SCHEME.match(path)
    return found.group(1).lower() if found else None


def local_path(path: str) -> str | None:
    """``path`` as an absolute path of this machine (a plain path, ``file:/x``, ``file:///x``), or None when it
    names another filesystem (``hdfs://``, ``s3a://``): what the driver engine, DuckDB and Python's ``open``
    can read and write without Hadoop's FileSystem."""
    scheme = scheme_of(path)
    if scheme is None:
        return absolute(path)
    if scheme == "file":
        return absolute(re.sub(r"^file:(//)?", "", path, flags=re.IGNORECASE) or "/")
    return None


def absolute(path: str) -> str:
    """A local path without a scheme, made absolute against this Python process's working directory.

    Spark's JVM resolves a relative path against *its* working directory, fixed when it started,
    while Python's ``open`` (the verdict, the report, GX) uses the process's current one: after a
    ``chdir`` (a notebook, a test) a relative ``--out`` would be split between two places. Every
    job resolves its output directory with this first, so both sides write to the same one.
    Paths with a scheme (``hdfs://``, ``s3a://``, ``file:``) are returned unchanged."""
    if _SCHEME.match(path) or os.path.isabs(path):
        return path
    return os.path.abspath(path)


def write_text(spark: SparkSession, path: str, text: str) -> None:
    """Write a whole text file through Hadoop's FileSystem (local, hdfs://, s3a://)."""
    jvm = spark.sparkContext._jvm
    target = jvm.org.apache.hadoop.fs.Path(path)
    fs = target.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    stream = fs.create(target, True)
    try:
        stream.write(bytearray(text.encode("utf-8")))
    finally:
        stream.close()


def _fs(spark: SparkSession, path: str):
    jvm = spark.sparkContext._jvm
    target = jvm.org.apache.hadoop.fs.Path(path)
    return target, target.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())


def path_exists(spark: SparkSession, path: str) -> bool:
    target, fs = _fs(spark, path)
    return bool(fs.exists(target))


def delete_path(spark: SparkSession, path: str) -> None:
    target, fs = _fs(spark, path)
    if fs.exists(target):
        fs.delete(target, True)


def rename_path(spark: SparkSession, source: str, destination: str) -> None:
    """Move a directory (atomic on HDFS and local disks; a copy on object stores)."""
    src, fs = _fs(spark, source)
    dst, _ = _fs(spark, destination)
    if not fs.rename(src, dst):
        raise OSError(f"could not move {source} to {destination}")
