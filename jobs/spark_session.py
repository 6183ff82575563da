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


def build_session(master: str | None = None, conf: dict[str, str] | None = None, app_name: str = "kafka-forensics") -> SparkSession:
    """Get or create the session. ``master`` None keeps what spark-submit set (or local[*])."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    quiet = resources.files("kafka_forensics.jobs") / "log4j2-quiet.properties"
    java_options = f"-Dlog4j2.configurationFile=file:{quiet}"
    if conf and "spark.driver.extraJavaOptions" in conf:
        java_options += " " + conf["spark.driver.extraJavaOptions"]
    builder = builder.config("spark.driver.extraJavaOptions", java_options)
    if master:
        builder = builder.master(master)
    elif not os.environ.get("SPARK_HOME_SUBMITTED") and "spark.master" not in (conf or {}):
        builder = builder.master(os.environ.get("KAFKA_FORENSICS_MASTER", "local[*]"))
    for key, value in {**LOCAL_DEFAULTS, **(conf or {})}.items():
        if key != "spark.driver.extraJavaOptions":
            builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(os.environ.get("KAFKA_FORENSICS_SPARK_LOG_LEVEL", "ERROR"))
    return spark
