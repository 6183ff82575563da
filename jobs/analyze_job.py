"""``analyze``: parse → replay → check → report in one Spark session, with what to print at the end.

Each stage is the same function its own subcommand runs (``run_parse``, ``replay_events``,
``run_check``, ``build_report``), so ``analyze DIR`` leaves exactly the tables, ``verdict.json``
and report the four commands would have. Stages report to a ``progress`` callback (start, end
with counts) so the command can show them; only aggregates reach the driver.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from pyspark.sql import SparkSession

from kafka_forensics.core.errors import InputError
from kafka_forensics.core.tables import CONTROLLERS, EVENTS, FINDINGS
from kafka_forensics.core.verdict import Verdict
from kafka_forensics.replay.findings import SEVERITIES

from .frames import duckdb_session, functions_of, read_table
from .fs import absolute

STAGES = ("parse", "replay", "check", "report")
Progress = Callable[[str, str, dict], None]  # (stage, "start" | "done", counts)


@dataclass
class AnalyzeResult:
    out_dir: str
    report_path: str
    parse: Any = None  # ParseSummary
    replay: Any = None  # ReplaySummary
    verdict: Optional[Verdict] = None
    report: Any = None  # report_job.ReportSummary
    window: tuple = (None, None)  # first and last timestamp of the events (UTC)
    controllers: list[dict] = field(default_factory=list)  # per cluster: epochs, controller ids, failovers
    by_severity: dict[str, int] = field(default_factory=dict)
    top_findings: list[dict] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def exit_code(self) -> int:
        """1 when expectations failed, else 0 (input errors never get here: they raise, exit 2)."""
        if self.verdict is None:
            return 0
        return int(getattr(self.verdict, "exit_code", 0 if self.verdict.passed else 1))


def _quiet(stage: str, phase: str, counts: dict) -> None:
    return None


def run_analyze(
    spark: Optional[SparkSession],
    inputs: list[str],
    out_dir: str,
    report_path: str,
    parse_options,
    replay_options,
    check_config=None,
    top_findings: int = 5,
    top_partitions: int = 20,
    progress: Progress = _quiet,
) -> AnalyzeResult:
    """The four stages, on Spark (``spark``) or, ``spark`` None, in this process without a JVM (the driver
    engine, ``jobs/engine.py``): parse and replay by the functions Spark's workers run, check and report on an
    in-process DuckDB (``check_job``, ``frames``)."""
    from .check_job import run_check
    from .parse_driver import parse_in_driver
    from .parse_job import run_parse
    from .replay_driver import replay_in_driver
    from .replay_job import replay_events, validate_options
    from .report_beside import ReportBeside, ReportThread

    validate_options(replay_options)
    result = AnalyzeResult(out_dir=out_dir, report_path=report_path)
    out_dir = absolute(out_dir)  # what Spark reads; the result names the directory as given

    driver = spark is None
    # what the report and the summary query: Spark, or the same code on DuckDB
    tables = duckdb_session() if driver else spark

    def session() -> SparkSession:
        assert spark is not None
        return spark

    def stage(name: str, action: Callable[[], Any], counts: Callable[[Any], dict]) -> Any:
        progress(name, "start", {})
        began = time.monotonic()
        value = action()
        result.seconds[name] = time.monotonic() - began
        progress(name, "done", {**counts(value), "seconds": result.seconds[name]})
        return value

    result.parse = stage(
        "parse",
        (lambda: parse_in_driver(list(inputs), out_dir, parse_options))
        if driver
        else (lambda: run_parse(session(), list(inputs), out_dir, parse_options)),
        lambda p: {
            "lines": p.lines_read,
            "records": p.records,
            "quarantined": p.quarantined,
            "files": len(p.files),
            "reconciled": p.reconciled,
        },
    )
    if result.parse.records == 0:
        raise InputError(f"no recognisable Kafka log lines in {', '.join(map(str, inputs))}")
    result.replay = stage(
        "replay",
        (lambda: replay_in_driver(out_dir, replay_options))
        if driver
        else (lambda: replay_events(session(), read_table(session(), out_dir, EVENTS), out_dir, replay_options)),
        lambda r: {"partitions": r.partitions, "controllers": r.controllers, "findings": r.findings},
    )
    # The report is built beside the check (``report_beside``): on the driver engine in a process of its own (both
    # are GIL-holding Python), on Spark in another thread. Its time is its own, from its start beside the check.
    beside = (
        ReportBeside(out_dir, report_path, top_partitions)
        if driver
        else ReportThread(tables, out_dir, report_path, top_partitions)
    )
    try:
        result.verdict = stage(
            "check",
            lambda: run_check(None if driver else session(), result.out_dir, check_config),
            lambda v: {"passed": bool(v.passed)},
        )
    except BaseException:
        beside.end()
        raise
    beside.verdict_written()
    progress("report", "start", {})
    result.report, result.seconds["report"] = beside.result()
    progress(
        "report", "done", {"bytes": result.report.size_bytes, "beside": "check", "seconds": result.seconds["report"]}
    )
    summarize(tables, result, top_findings)
    return result


def summarize(spark: SparkSession, result: AnalyzeResult, top_findings: int = 5) -> None:
    """Window, controllers and failovers, findings by severity and the most severe ones (all bounded).
    ``spark``: Spark's session or SQLFrame's DuckDB one (``frames``)."""
    from .replay_job import collect_arrow
    from .replay_job import top_findings as top_findings_of

    F = functions_of(spark)
    out = absolute(result.out_dir)
    span = collect_arrow(read_table(spark, out, EVENTS).agg(F.min("ts").alias("first"), F.max("ts").alias("last")))
    result.window = (span[0]["first"], span[0]["last"]) if span else (None, None)
    result.controllers = collect_arrow(
        read_table(spark, out, CONTROLLERS)
        .groupBy("cluster")
        .agg(
            F.count(F.lit(1)).alias("epochs"),
            F.sort_array(F.collect_set("controller_id")).alias("ids"),
            F.min("controller_epoch").alias("first_epoch"),
            F.max("controller_epoch").alias("last_epoch"),
        )
        .orderBy("cluster")
    )
    for row in result.controllers:
        row["failovers"] = max(0, row["epochs"] - 1)  # each new epoch after the first is a controller change
    findings = read_table(spark, out, FINDINGS)
    counts = {r["severity"]: r["count"] for r in collect_arrow(findings.groupBy("severity").count())}
    result.by_severity = {s: int(counts[s]) for s in SEVERITIES if counts.get(s)}
    result.top_findings = top_findings_of(spark, out, top_findings) if top_findings else []


__all__ = ["STAGES", "AnalyzeResult", "run_analyze", "summarize"]
