"""One place that builds the SparkSession: local by default, anything spark-submit accepts otherwise."""

from __future__ import annotations

import os
import sys
from importlib import resources

from pyspark.sql import SparkSession

# Defaults for a laptop run; every one can be overridden with --conf k=v.
LOCAL_DEFAULTS = {
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "8",
    # binaryFile reads whole files; one file per Arrow batch bounds a Python worker's memory.
    "spark.sql.execution.arrow.maxRecordsPerBatch": "1",
    # spread files over cores instead of packing 128 MB of logs into one task
    "spark.sql.files.maxPartitionBytes": str(16 << 20),
    "spark.sql.files.openCostInBytes": str(1 << 20),
    "spark.python.worker.reuse": "true",
    # partitioned writes with concurrent writers keep each task's row order (no per-task sort)
    "spark.sql.maxConcurrentOutputFileWriters": "4",
}

# Not imposed on a cluster: there the UI is wanted and shuffle width follows the cluster's size.
LAPTOP_ONLY = frozenset({"spark.ui.enabled", "spark.ui.showConsoleProgress", "spark.sql.shuffle.partitions"})


def local_driver_memory() -> str:
    """Heap for a local run's driver JVM, which also runs every task: half the machine's memory,
    1 to 8 GiB. Spark's own default (1g) ran out of heap caching 4 M events in ``check``."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not POSIX: keep Spark's default
        return "1g"
    return f"{max(1, min(8, total // 2 // (1 << 30)))}g"


def launched_by_spark_submit() -> bool:
    """True in a driver that spark-submit (or pyspark) started: its JVM is already up, with the
    master and configuration the user gave spark-submit, and the Python side only connects to it."""
    return bool(os.environ.get("PYSPARK_GATEWAY_PORT")) or SparkSession.getActiveSession() is not None


def build_session(
    master: str | None = None, conf: dict[str, str] | None = None, app_name: str = "kafka-forensics"
) -> SparkSession:
    """Get or create the session. ``master`` None keeps what spark-submit set (or local[*]).

    Under spark-submit nothing it was given is overridden: no master, no driver options, and the
    laptop defaults only for keys the submission left unset."""
    conf = dict(conf or {})
    submitted = launched_by_spark_submit()
    builder = SparkSession.builder.appName(app_name)
    preset: set[str] = set()
    if submitted:
        from pyspark import SparkConf

        preset = {key for key, _ in SparkConf().getAll()}
    else:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        quiet = resources.files("kafka_forensics.jobs") / "log4j2-quiet.properties"
        java_options = f"-Dlog4j2.configurationFile=file:{quiet}"
        if "spark.driver.extraJavaOptions" in conf:
            java_options += " " + conf["spark.driver.extraJavaOptions"]
        builder = builder.config("spark.driver.extraJavaOptions", java_options)
        # read when pyspark launches the JVM (spark-submit --conf); --conf spark.driver.memory=... wins
        builder = builder.config("spark.driver.memory", conf.pop("spark.driver.memory", local_driver_memory()))
    if master:
        builder = builder.master(master)
    elif not submitted and "spark.master" not in conf:
        builder = builder.master(os.environ.get("KAFKA_FORENSICS_MASTER", "local[*]"))
    for key, value in LOCAL_DEFAULTS.items():
        if key not in preset and not (submitted and key in LAPTOP_ONLY):
            builder = builder.config(key, value)
    for key, value in conf.items():
        if submitted or key != "spark.driver.extraJavaOptions":
            builder = builder.config(key, value)
    spark = builder.getOrCreate()
    # Spark's own log stays off the terminal: a failed job is one sentence from the command
    # (--debug: the whole error); KAFKA_FORENSICS_SPARK_LOG_LEVEL=ERROR shows Spark's errors again.
    spark.sparkContext.setLogLevel(os.environ.get("KAFKA_FORENSICS_SPARK_LOG_LEVEL", "OFF"))
    return spark
