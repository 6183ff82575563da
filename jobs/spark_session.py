"""One place that builds the SparkSession: local by default, anything spark-submit accepts otherwise."""

from __future__ import annotations

import os
import sys
from importlib import resources
from typing import Iterable

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
    # Timestamps as Parquet's INT64 microseconds adjusted to UTC, as the workers' pyarrow writer
    # writes them (jobs/events_writer.py), not Spark's legacy INT96: a table has one physical type
    # whichever writer wrote it (readers other than Spark see the difference).
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
}

# Not imposed on a cluster: there the UI is wanted and shuffle width follows the cluster's size.
LAPTOP_ONLY = frozenset({"spark.ui.enabled", "spark.ui.showConsoleProgress", "spark.sql.shuffle.partitions"})


def local_memory_gib() -> int:
    """What a local run may hold in memory: half the machine's memory, 1 to 8 GiB. The heap of a local
    run's driver JVM, which also runs every task (Spark's own default, 1g, ran out of heap caching 4 M
    events in ``check``), and the bound of the driver engine's own need (``engine.fits_the_driver``)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not POSIX: Spark's default
        return 1
    return max(1, min(8, total // 2 // (1 << 30)))


def local_driver_memory() -> str:
    """``spark.driver.memory`` of a local run (``local_memory_gib``)."""
    return f"{local_memory_gib()}g"


# A run on a small input spends more CPU compiling the JVM's hot code with C2 than running it
# (bench/RESULTS.md, "First run": the JIT took 43 of ~86 CPU s of analyze on the bundled sample, C2
# 34 of them; with C1 only the whole run took 62 CPU s instead of 102-110). Below this much local
# input the local driver JVM (which runs the tasks too) stops at C1. Only speed changes: the same
# bytecode runs, compiled by the quicker compiler.
SHORT_RUN_BYTES = 32 << 20
# With C1 alone the JVM reserves a 48 MB code cache (instead of tiered compilation's 240 MB), which the
# generated code of a whole analyze fills ("Out of space in CodeCache for method handle intrinsic",
# then the JVM dies): keep the tiered size.
SHORT_RUN_JAVA_OPTION = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"


# The Python workers' daemon of a local run: Spark's own, started without the archive copies of the
# installed pyspark on its import path, which cost ~0.1 s of CPU per task (jobs/python_daemon.py).
PYTHON_DAEMON = {"spark.python.daemon.module": "kafka_forensics.jobs.python_daemon"}


def short_run_conf() -> dict[str, str]:
    """SQL settings for a short run, whose cost is Spark's fixed cost per query, not its data
    (bench/RESULTS.md, "First run: Spark's cost per query"). Adaptive execution runs every shuffle
    stage of a query as a job of its own (373 jobs for the bundled sample's analyze, 193 without it);
    whole-stage code generation compiles Java source for every query, to save time per row that a
    small input does not have; tasks beyond one per core only add scheduling.

    Without whole-stage code generation each task still compiled its expressions' projections with
    Janino (``CodeGeneratorWithInterpretedFallback``): 60 % of the executor threads' samples on the
    bundled sample. ``factoryMode=NO_CODEGEN`` evaluates them with Spark's interpreted expressions, the
    path Spark itself falls back to when code generation fails and runs all its expression tests on
    (an internal setting: bench/RESULTS.md, "Codegen of expressions", says why it is used here)."""
    return {
        "spark.sql.adaptive.enabled": "false",
        "spark.sql.codegen.wholeStage": "false",
        "spark.sql.codegen.factoryMode": "NO_CODEGEN",
        "spark.sql.shuffle.partitions": str(os.cpu_count() or 1),
    }


def short_run(inputs: Iterable[str]) -> bool:
    """True if every input is a local file or directory (no scheme) and together they hold at most
    SHORT_RUN_BYTES. Anything else (a remote input, a missing path: discovery reports it) is False."""
    total = 0
    for given in inputs:
        if "://" in given or not os.path.exists(given):
            return False
        files = [given] if os.path.isfile(given) else (os.path.join(d, f) for d, _, fs in os.walk(given) for f in fs)
        for path in files:
            try:
                total += os.path.getsize(path)
            except OSError:
                continue
            if total > SHORT_RUN_BYTES:
                return False
    return True


def driver_jvm_running() -> bool:
    """True in a driver whose JVM is already up: started by spark-submit (or pyspark) with the master
    and configuration the user gave it, or by an earlier session of this process, in any thread
    (``getActiveSession`` only sees the calling thread's). The Python side then only connects to it."""
    from pyspark import SparkContext

    return (
        bool(os.environ.get("PYSPARK_GATEWAY_PORT"))
        or SparkSession.getActiveSession() is not None
        or SparkContext._active_spark_context is not None
    )


def chosen_master(master: str | None, conf: dict[str, str] | None) -> str:
    """The master a session this process launches gets: ``--master``, else ``--conf spark.master``,
    else ``KAFKA_FORENSICS_MASTER``, else ``local[*]``."""
    return master or (conf or {}).get("spark.master") or os.environ.get("KAFKA_FORENSICS_MASTER", "local[*]")


def session_settings(
    master: str | None,
    conf: dict[str, str] | None,
    inputs: Iterable[str] | None,
    running: dict[str, str] | None = None,
) -> dict[str, str]:
    """Every setting ``build_session`` gives the builder, in the order given (later wins).

    ``running``: the settings of a JVM that is already up (spark-submit's, or an earlier session's), or
    None when this call launches one. A running JVM keeps its master, driver options and every setting
    it was given: only the laptop defaults it left unset and the caller's own ``conf`` are added. A
    launch gets the laptop defaults, then the short-run ones for a small local input, then ``conf``."""
    conf = dict(conf or {})
    settings: dict[str, str] = {}
    if running is None:
        quiet = resources.files("kafka_forensics.jobs") / "log4j2-quiet.properties"
        java_options = f"-Dlog4j2.configurationFile=file:{quiet}"
        chosen = chosen_master(master, conf)
        short = inputs is not None and chosen.startswith("local") and short_run(inputs)
        if short:
            java_options += " " + SHORT_RUN_JAVA_OPTION  # the user's own options below come later and win
        if "spark.driver.extraJavaOptions" in conf:
            java_options += " " + conf.pop("spark.driver.extraJavaOptions")
        settings["spark.driver.extraJavaOptions"] = java_options
        # read when pyspark launches the JVM (spark-submit --conf); --conf spark.driver.memory=... wins
        settings["spark.driver.memory"] = conf.pop("spark.driver.memory", local_driver_memory())
        settings["spark.master"] = chosen
        settings.update(LOCAL_DEFAULTS)
        if chosen.startswith("local"):  # the workers run in this environment, which has this package
            settings.update(PYTHON_DAEMON)
        if short:
            settings.update(short_run_conf())
    else:
        settings.update(
            (key, value) for key, value in LOCAL_DEFAULTS.items() if key not in running and key not in LAPTOP_ONLY
        )
        if master:
            settings["spark.master"] = master
    settings.update(conf)
    return settings


def build_session(
    master: str | None = None,
    conf: dict[str, str] | None = None,
    app_name: str = "kafka-forensics",
    inputs: Iterable[str] | None = None,
) -> SparkSession:
    """Get or create the session with ``session_settings``. ``master`` None keeps what spark-submit
    set (or local[*]). ``inputs``: what the command will read; a small local input on a local master
    that this call launches gets a JVM and SQL settings tuned for a short run (``short_run``).

    Under spark-submit, or in a process whose session is already running, nothing it was given is
    overridden: no master, no driver options, and the laptop defaults only for keys it left unset."""
    running = None
    if driver_jvm_running():
        from pyspark import SparkConf

        running = dict(SparkConf().getAll())
    else:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(app_name)
    for key, value in session_settings(master, conf, inputs, running).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    # Spark's own log stays off the terminal: a failed job is one sentence from the command
    # (--debug: the whole error); KAFKA_FORENSICS_SPARK_LOG_LEVEL=ERROR shows Spark's errors again.
    spark.sparkContext.setLogLevel(os.environ.get("KAFKA_FORENSICS_SPARK_LOG_LEVEL", "OFF"))
    return spark
