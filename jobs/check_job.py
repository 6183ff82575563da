"""The data-quality job: GX suites over the replay's tables -> validation results, Data Docs, a verdict.

``run_check(spark, out_dir, config)`` needs the tables ``run_replay`` wrote under ``out_dir``. It
caches them once, counts them (one pass each, which also fills the cache), and runs each suite as
one GX validation over its cached table; every custom expectation is one query (a row count and a
bounded sample), so the number of Spark passes depends on the suites, never on the input size.

``run_check(None, out_dir, config)`` runs the same suites without Spark, for a driver-engine run whose
tables are local: the custom expectations' queries run on an in-process DuckDB over the Parquet files
(``expectations.duckdb_metrics``, the Spark SQL transpiled by ``expectations.dialects``), and GX
validates each suite's table on its pandas engine, loaded with the values of the columns its
built-in expectations read and no others (``expectations.frame_columns``). The
results, the verdict and the Data Docs are written exactly as on Spark (tests compare them).

Writes under ``out_dir``:
- ``validation/<suite>.json``  the GX suite validation result;
- ``data_docs/index.html``     GX Data Docs, from a file-backed context in ``out_dir/gx``
                               (a local temp dir, then copied, when ``out_dir`` is remote);
- ``verdict.json``             pass/fail and why - written atomically (temp file + rename) and
                               always, also when the check fails with an error (``error`` field).

A scheduler should read ``verdict.json`` rather than trust the exit code: some spark-submit
cluster modes lose the driver's exit code.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Iterator, Mapping, Optional

from pyspark.sql import DataFrame, SparkSession

from kafka_forensics.core.errors import InputError, JobError, KafkaForensicsError, UsageError
from kafka_forensics.core.tables import TABLES
from kafka_forensics.core.verdict import VERDICT, Verdict

from .check_config import CheckConfig, load_check_config
from .fs import absolute, local_path, path_exists, write_text
from .local_tables import write_text as write_local_text
from .spark_errors import short_error
from .stored_tables import local_arrow, local_frame, local_rows, read_table

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.dataset as ds


# ---- files ------------------------------------------------------------------------------------------
def write_atomically(spark: Optional[SparkSession], path: str, text: str) -> None:
    """Write a whole file so a reader sees the old one or the new one, never half: temp + rename.
    Local paths need no Spark; others go through Hadoop's FileSystem (rename is atomic on HDFS;
    on object stores a rename is a copy, still never a partial object)."""
    target = local_path(path)
    if target is not None:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        write_local_text(Path(target), text)
        return
    if spark is None:
        raise JobError(f"cannot write {path} without a Spark session")
    jvm = spark.sparkContext._jvm
    remote = jvm.org.apache.hadoop.fs.Path(path)
    tmp = jvm.org.apache.hadoop.fs.Path(f"{path}.{uuid.uuid4().hex}.tmp")
    fs = remote.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    write_text(spark, str(tmp), text)
    if fs.exists(remote):
        fs.delete(remote, False)
    if not fs.rename(tmp, remote):
        raise JobError(f"could not move {tmp} to {path}")


def read_small_text(spark: Optional[SparkSession], path: str) -> Optional[str]:
    """A small file (a summary JSON) as text, or None if it does not exist (``spark`` None: a local path only)."""
    local = local_path(path)
    if local is not None:
        try:
            with open(local, encoding="utf-8") as handle:
                return handle.read()
        except FileNotFoundError:
            return None
    if spark is None:
        raise JobError(f"cannot read {path} without a Spark session")
    if not path_exists(spark, path):
        return None
    return "\n".join(r[0] for r in spark.read.text(path, wholetext=True).collect())


def _copy_tree_to(spark: SparkSession, local_dir: str, target: str) -> None:
    local = local_path(target)
    if local is not None:
        shutil.rmtree(local, ignore_errors=True)
        shutil.copytree(local_dir, local)
        return
    jvm = spark.sparkContext._jvm
    dst = jvm.org.apache.hadoop.fs.Path(target)
    fs = dst.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    fs.delete(dst, True)
    fs.copyFromLocalFile(False, True, jvm.org.apache.hadoop.fs.Path(local_dir), dst)


# ---- verdict ----------------------------------------------------------------------------------------
def versions(spark: Optional[SparkSession] = None) -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for dist in ("kafka-forensics", "great-expectations", "pyspark"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = "unknown"
    if spark is not None:
        out["spark"] = spark.version
    return out


def error_verdict(
    out_dir: str,
    err: BaseException,
    config: Optional[CheckConfig] = None,
    inputs_info: Optional[dict] = None,
    spark: Optional[SparkSession] = None,
) -> Verdict:
    """The verdict of a check that could not run (input/config error: exit 2; anything else: 3)."""
    code = err.exit_code if isinstance(err, KafkaForensicsError) else 3
    text = str(err) if isinstance(err, KafkaForensicsError) else f"internal error: {type(err).__name__}: {err}"
    return Verdict(
        passed=False,
        exit_code=code,
        out_dir=out_dir,
        error=text,
        thresholds=config.to_dict() if config else {},
        inputs=inputs_info or {},
        versions=versions(spark),
    )


def write_verdict(spark: Optional[SparkSession], verdict: Verdict) -> None:
    write_atomically(spark, f"{verdict.out_dir}/{VERDICT}", verdict.to_json())


def _summarise_suite(suite: str, result: dict, config: CheckConfig) -> tuple[dict, list[str], list[str]]:
    """(suite entry of verdict.json, failing names, warning names) from one GX suite result."""
    expectations, failed, warned = {}, [], []
    for r in result["results"]:
        cfg = r["expectation_config"]
        meta = cfg.get("meta") or {}
        key = meta.get("kf_key", cfg["type"])
        res = r.get("result") or {}
        raised = (r.get("exception_info") or {}).get("raised_exception", False)
        count = res.get("observed_value") if "unexpected_count" not in res else res.get("unexpected_count")
        samples = (res.get("details") or {}).get("unexpected_rows")
        if samples is None and res.get("partial_unexpected_index_list"):
            samples = [
                {"evidence": f"{x.get('source_file')}:{x.get('line_no')}", "value": x.get(cfg["kwargs"].get("column"))}
                for x in res["partial_unexpected_index_list"]
            ]
        severity = cfg.get("severity", "critical")
        entry = {
            "success": bool(r["success"]),
            "severity": severity,
            "rule": meta.get("kf_rule"),
            "unexpected_count": count if isinstance(count, int) else None,
            "samples": (samples or [])[: config.sample_rows] if not r["success"] else [],
        }
        if raised:
            entry["error"] = (r.get("exception_info") or {}).get("exception_message")
        expectations[key] = entry
        if not r["success"]:
            (failed if severity in config.fail_on else warned).append(f"{suite}.{key}")
    stats = result.get("statistics", {})
    return (
        {
            "success": not failed,
            "evaluated": stats.get("evaluated_expectations"),
            "unsuccessful": stats.get("unsuccessful_expectations"),
            "expectations": expectations,
        },
        failed,
        warned,
    )


def _write_validation(spark: Optional[SparkSession], path: str, result: dict) -> None:
    """One suite's GX result as JSON (through Hadoop's FileSystem on Spark, a plain file without it)."""
    text = json.dumps(result, indent=2, sort_keys=True, default=str) + "\n"
    if spark is not None:
        write_text(spark, path, text)
    else:
        write_atomically(None, path, text)


# What the check's DuckDB may hold before its joins, sorts and windows spill to a temporary directory: without
# a bound DuckDB takes up to 80 % of the machine, and the custom queries' need grows with the events table
# (its peak beyond the frames: about 250 MB at 1 M lines, 650 MB at 3 M). Bounded at 256 MB, the check of 3 M
# lines peaked at 0.99 GB instead of 1.23 GB, in 13.4 s instead of 12.7 s (load 3; bench/RESULTS.md, "The driver
# engine's check in bounded memory").
DUCKDB_MEMORY_LIMIT = "256MB"


# ---- the job ----------------------------------------------------------------------------------------
def require_replay_tables(spark: Optional[SparkSession], out_dir: str) -> None:
    """Raise ``InputError`` unless ``out_dir`` holds every table and the replay summary (a local
    ``out_dir`` only when ``spark`` is None)."""

    def exists(path: str) -> bool:
        if spark is not None:
            return path_exists(spark, path)
        local = local_path(path)
        return local is not None and os.path.exists(local)

    missing = [t for t in TABLES if not exists(f"{out_dir}/{t}")]
    if missing or not exists(f"{out_dir}/replay_summary.json"):
        what = ", ".join(missing) if missing else "replay_summary.json"
        raise InputError(
            f"{out_dir} holds no complete replay output (missing {what}): run "
            f"`kafka-forensics check INPUT... --out {out_dir}` or `kafka-forensics replay` first"
        )


def _load_tables(spark: SparkSession, out_dir: str) -> dict[str, DataFrame]:
    from pyspark import StorageLevel

    return {t: read_table(spark, out_dir, t).persist(StorageLevel.MEMORY_AND_DISK) for t in TABLES}


def _local_tables(out_dir: str) -> dict[str, pa.Table | ds.Dataset]:
    local = local_path(out_dir)
    assert local is not None, out_dir  # run_check refuses a remote DIR without Spark
    return {t: local_arrow(local, t) for t in TABLES}


@contextlib.contextmanager
def _spark_batches(spark: SparkSession, tables: Mapping[str, DataFrame]) -> Iterator[Mapping[str, DataFrame]]:
    """The suites' batches on Spark: the cached tables, with the views the queries read."""
    from kafka_forensics.expectations.views import drop_views, register_views

    register_views(spark, tables)
    try:
        yield tables
    finally:
        drop_views(spark)


@contextlib.contextmanager
def _duckdb_batches(
    tables: Mapping[str, pa.Table | ds.Dataset], frame_columns: Mapping[str, Optional[frozenset[str]]]
) -> Iterator[dict]:
    """The suites' batches without Spark: every table (and the rule tables) as a view of an in-process DuckDB for
    the custom queries, a large one scanning its Parquet files as a query asks (``stored_tables.local_arrow``);
    each suite's table as a pandas frame for GX's pandas engine holding the values of ``frame_columns[table]``
    only (``expectations.frame_columns``: what its built-in expectations read; None: all)."""
    import duckdb

    from kafka_forensics.expectations import duckdb_metrics
    from kafka_forensics.expectations.views import TABLE_VIEWS, register_duckdb_views

    spill = tempfile.TemporaryDirectory(prefix="kafka-forensics-duckdb-")
    con = duckdb.connect(config={"memory_limit": DUCKDB_MEMORY_LIMIT, "temp_directory": spill.name})
    try:
        con.sql("SET TimeZone = 'UTC'")  # as Spark's session time zone: instants print as UTC
        register_duckdb_views(con, tables)
        frames = {}
        for name, columns in frame_columns.items():
            frames[name] = local_frame(tables[name], columns)
            frames[name].attrs[duckdb_metrics.BATCH_VIEW_ATTR] = TABLE_VIEWS[name]
        with duckdb_metrics.using(con):
            yield frames
    finally:
        con.close()
        spill.cleanup()


def _frame_columns(suites: Mapping[str, list]) -> dict[str, Optional[frozenset[str]]]:
    """Table -> the columns whose values the built-in expectations of the suites validating it read (None: any),
    with the evidence columns GX reports offending rows by."""
    from kafka_forensics.expectations.frame_columns import columns_read
    from kafka_forensics.expectations.suites import EVIDENCE_COLUMNS, SUITE_TABLES

    out: dict[str, Optional[frozenset[str]]] = {}
    for suite, expectations in suites.items():
        table, read = SUITE_TABLES[suite], columns_read(expectations, EVIDENCE_COLUMNS.get(suite, ()))
        known = out.get(table, frozenset())
        out[table] = None if read is None or known is None else known | read
    return out


def _run_suites(
    spark: Optional[SparkSession],
    config: CheckConfig,
    tables: Mapping[str, DataFrame] | Mapping[str, pa.Table | ds.Dataset],
    gx_root: str,
    timings: Optional[dict] = None,
) -> dict[str, dict]:
    """GX results per suite: on Spark's cached ``tables``, or (``spark`` None) on local Arrow tables and datasets
    without Spark."""
    import time

    from kafka_forensics.expectations import gx_run
    from kafka_forensics.expectations.suites import EVIDENCE_COLUMNS, SUITE_TABLES, SuiteSettings, expectations_for

    settings = SuiteSettings(
        max_quarantine_rate=config.max_quarantine_rate,
        clock_skew_seconds=config.clock_skew_seconds,
        max_unavailable_seconds=config.max_unavailable_seconds,
        max_under_min_isr_seconds=config.max_under_min_isr_seconds,
        severity=config.severity,
    )
    suites = {suite: expectations_for(suite, settings) for suite in config.suites}
    if spark is None:
        batches = _duckdb_batches(tables, _frame_columns(suites))  # type: ignore[arg-type]
        datasource = "pandas"
        engine_settings = gx_run.no_batch_fingerprint()
    else:
        batches = _spark_batches(spark, tables)  # type: ignore[arg-type]
        datasource = "spark"
        engine_settings = contextlib.nullcontext()
    results = {}
    with gx_run.quiet_gx(), engine_settings, batches as frames:
        context = gx_run.open_context(f"{gx_root}/gx", f"{gx_root}/data_docs")
        for suite, expectations in suites.items():
            started = time.perf_counter()
            table = SUITE_TABLES[suite]
            results[suite] = gx_run.validate(
                context,
                suite,
                table,
                frames[table],
                expectations,
                evidence_columns=EVIDENCE_COLUMNS.get(suite),
                datasource=datasource,
            )
            if timings is not None:
                timings[suite] = time.perf_counter() - started
        gx_run.build_docs(context)
    return results


def run_check(
    spark: Optional[SparkSession],
    out_dir: str,
    config: Optional[CheckConfig] = None,
    inputs_info: Optional[dict] = None,
    timings: Optional[dict] = None,
) -> Verdict:
    """Run the configured suites over the replay tables in ``out_dir``; write results and the verdict.

    Returns the verdict (``passed``/``exit_code`` 0 or 1). On an error the verdict is written with
    ``error`` set and the error is raised again (``InputError`` exit 2 when the tables are missing,
    ``JobError`` for a Spark/GX failure). ``timings``, if given, receives seconds per suite.
    ``spark`` None: the check runs in this process without Spark (a local ``out_dir`` only).
    """
    config = config or load_check_config(None)
    out_dir = out_dir.rstrip("/") or out_dir
    where = absolute(out_dir)  # for Spark; the verdict names the directory as it was given
    tables: dict[str, DataFrame] = {}
    arrow: dict[str, pa.Table | ds.Dataset] = {}
    try:
        local_dir = local_path(out_dir)
        if spark is None and local_dir is None:
            raise UsageError(f"the check without Spark reads a local DIR only, not {out_dir}")
        require_replay_tables(spark, where)
        if spark is None:
            arrow = _local_tables(where)
            counts = {name: local_rows(table) for name, table in arrow.items()}
        else:
            tables = _load_tables(spark, where)
            counts = {name: df.count() for name, df in tables.items()}
        gx_root = local_dir if local_dir is not None else tempfile.mkdtemp(prefix="kafka-forensics-gx-")
        if local_dir is not None:
            for sub in ("gx", "data_docs"):
                shutil.rmtree(os.path.join(gx_root, sub), ignore_errors=True)
        try:
            results = _run_suites(spark, config, arrow if spark is None else tables, gx_root, timings)
        except KafkaForensicsError:
            raise
        except Exception as err:
            raise JobError(f"check job failed: {short_error(err)}") from err
        verdict = Verdict(
            passed=True,
            exit_code=0,
            out_dir=out_dir,
            counts=counts,
            thresholds=config.to_dict(),
            inputs=inputs_info or {},
            versions=versions(spark),
        )
        summary = read_small_text(spark, f"{out_dir}/replay_summary.json")
        verdict.findings_by_rule = json.loads(summary).get("findings_by_rule", {}) if summary else {}
        for suite, result in results.items():
            _write_validation(spark, f"{where}/validation/{suite}.json", result)
            verdict.suites[suite], failed, warned = _summarise_suite(suite, result, config)
            verdict.failed_expectations += failed
            verdict.warnings += warned
        if local_dir is None:
            _copy_tree_to(spark, f"{gx_root}/data_docs", f"{out_dir}/data_docs")
            shutil.rmtree(gx_root, ignore_errors=True)
        verdict.passed = not verdict.failed_expectations
        verdict.exit_code = 0 if verdict.passed else 1
        verdict.outputs = {
            "verdict": f"{out_dir}/{VERDICT}",
            "validation": [f"{out_dir}/validation/{s}.json" for s in results],
            "data_docs": f"{out_dir}/data_docs/index.html",
        }
        write_verdict(spark, verdict)
        return verdict
    except BaseException as err:
        if not isinstance(err, KeyboardInterrupt):
            with contextlib.suppress(Exception):  # the original error is the one to report
                write_verdict(spark, error_verdict(out_dir, err, config, inputs_info, spark))
        raise
    finally:
        for df in tables.values():
            df.unpersist()


__all__ = [
    "CheckConfig",
    "Verdict",
    "error_verdict",
    "load_check_config",
    "require_replay_tables",
    "run_check",
    "write_atomically",
    "write_verdict",
]
