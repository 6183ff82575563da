"""Events written by the Python workers themselves (pyarrow), when the output is on local disk.

Why: in the parse job, handing every event row back to the JVM (Arrow → Spark rows) and letting
Spark's Parquet writer encode the 40-column schema cost more CPU than parsing the line did
(``bench/RESULTS.md``, "Spark parse job"). pyarrow writes the same Arrow batches at about
1.6 µs per row. So when the job runs on one machine and DIR is a local path, each worker writes
the events of the file it parsed to ``part-<hash of the file's URI>.parquet`` and only the small
quarantine and per-file rows go through Spark.

Safe under retries and speculation: the name depends only on the input file, and a file is
written under a hidden temporary name and renamed into place, so a retried or duplicate task
replaces it whole and a killed one leaves only a hidden file (ignored by Spark, removed by
``finish``). On a cluster, or for ``hdfs://`` / ``s3a://`` outputs, Spark's own writer is used,
as before; ``--conf spark.kafka_forensics.events_writer=spark`` forces it everywhere.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import SparkSession

from kafka_forensics.core.errors import UsageError
from kafka_forensics.core.tables import EVENTS_SCHEMA

WRITER_CONF = "spark.kafka_forensics.events_writer"  # auto (default) | arrow | spark
ROW_GROUP_ROWS = 131_072
# As Spark's writer stores the table (it writes every column nullable): one physical schema for
# the events whichever writer wrote them, so a local and a cluster run leave identical tables.
STORED_SCHEMA = pa.schema([f.with_nullable(True) for f in EVENTS_SCHEMA])
_TMP_SUFFIX = ".tmp"


def local_events_dir(spark: SparkSession, path: str) -> str | None:
    """The local directory workers may write ``path`` into directly, or None to use Spark's writer.

    Only when every task runs on this machine (a ``local`` master, or ``arrow`` forced) and the
    path is on the local filesystem by Hadoop's own reading of it (no scheme: the default FS).
    No remote filesystem is ever contacted to decide."""
    choice = spark.conf.get(WRITER_CONF, "auto").strip().lower()
    if choice not in ("auto", "arrow", "spark"):
        raise UsageError(f"{WRITER_CONF} must be auto, arrow or spark, not {choice!r}")
    if choice == "spark" or (choice == "auto" and not spark.sparkContext.master.startswith("local")):
        return None
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    hadoop_path = jvm.org.apache.hadoop.fs.Path(path)
    scheme = hadoop_path.toUri().getScheme() or jvm.org.apache.hadoop.fs.FileSystem.getDefaultUri(conf).getScheme()
    if scheme != "file":
        return None
    local = jvm.org.apache.hadoop.fs.FileSystem.getLocal(conf)
    return str(local.makeQualified(hadoop_path).toUri().getPath())


def part_name(source_uri: str) -> str:
    """The events file of one input file: stable across retries, distinct across inputs."""
    return f"part-{hashlib.sha1(source_uri.encode('utf-8')).hexdigest()[:20]}.parquet"


def write_events(batches: list[pa.RecordBatch], events_dir: str, source_uri: str, name: str | None = None) -> int:
    """Write one input file's events (batches in EVENTS_SCHEMA) to ``name`` (default: the file's
    own ``part_name``; a split of a large file has its own); returns the number of rows written.
    Nothing is written for a file with no events."""
    rows = sum(b.num_rows for b in batches)
    if rows == 0:
        return 0
    table = pa.Table.from_batches(batches, schema=EVENTS_SCHEMA).cast(STORED_SCHEMA)
    directory = Path(events_dir)
    directory.mkdir(parents=True, exist_ok=True)
    final = directory / (name or part_name(source_uri))
    temporary = directory / f".{final.name}.{uuid.uuid4().hex}{_TMP_SUFFIX}"
    try:
        pq.write_table(table, temporary, row_group_size=ROW_GROUP_ROWS, compression="snappy")
        os.replace(temporary, final)
    finally:
        temporary.unlink(missing_ok=True)
    return rows


def finish(events_dir: str) -> bool:
    """Remove what killed tasks left behind; True if the directory holds at least one events file."""
    directory = Path(events_dir)
    if not directory.is_dir():
        return False
    for leftover in directory.glob(f".*{_TMP_SUFFIX}"):
        leftover.unlink(missing_ok=True)
    return any(directory.glob("part-*.parquet"))
