"""``kafka-forensics analyze``: from log files to tables, verdict and HTML report in one command."""

from __future__ import annotations

import threading

import click
from rich.console import Console
from rich.markup import escape

from .common import debug_option, make_console, run_guarded
from .listings import findings_listing
from .options import filter_options, input_options, parse_conf, parse_options_from
from .output import emit, format_option, is_machine, resolve_format
from .replay import evidence_options, evidence_replay_options, replay_options

console = make_console()
_SEVERITY_STYLE = {"critical": "bold red", "error": "red", "warning": "yellow", "info": "dim"}


class _StageProgress:
    """One status line per running stage, with Spark's task counts; one summary line per finished stage.
    ``spark`` None: the driver engine, which has no tasks to count."""

    def __init__(self, spark, out: Console):
        self.spark, self.out = spark, out
        self.status = None
        self.stage = None
        self._stop = threading.Event()
        self._thread = None

    def __call__(self, stage: str, phase: str, counts: dict) -> None:
        if phase == "start":
            self.stage = stage
            self.status = self.out.status(f"{stage}…")
            self.status.start()
            self._stop.clear()
            self._thread = threading.Thread(target=self._poll, daemon=True)
            self._thread.start()
            return
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.status is not None:
            self.status.stop()
        seconds = counts.pop("seconds", 0.0)
        details = ", ".join(
            f"{k} {v:,}" if isinstance(v, int) and not isinstance(v, bool) else f"{k} {v}" for k, v in counts.items()
        )
        self.out.print(f"[green]✓[/green] {stage:<7} {seconds:6.1f} s  {escape(details)}")

    def _poll(self) -> None:
        if self.spark is None:  # the driver engine: no Spark tasks to count
            return
        tracker = self.spark.sparkContext.statusTracker()
        while not self._stop.wait(0.5):
            try:
                done = total = 0
                for stage_id in tracker.getActiveStageIds():
                    info = tracker.getStageInfo(stage_id)
                    if info is not None:
                        done += info.numCompletedTasks
                        total += info.numTasks
                text = f"{self.stage}… Spark tasks {done}/{total}" if total else f"{self.stage}…"
                self.status.update(text)
            except Exception:  # progress is best effort; never fail the job for it
                return

    def close(self) -> None:
        self._stop.set()
        if self.status is not None:
            self.status.stop()


@click.command("analyze")
@click.argument("inputs", nargs=-1, required=True)
@click.option("--out", "out_dir", required=True, help="Output directory for the tables (local, hdfs://, s3a://).")
@click.option(
    "--report",
    "report_path",
    default=None,
    metavar="PATH",
    help="Where to write the HTML report (default DIR/report.html).",
)
@click.option(
    "--config",
    "config_path",
    default=None,
    type=click.Path(dir_okay=False),
    help="Expectations configuration (check.toml) for the check stage; default: the built-in one.",
)
@filter_options
@input_options
@replay_options
@evidence_options
@click.option("--show", default=5, show_default=True, metavar="N", help="Print the N most severe findings.")
@format_option
@debug_option
def analyze(
    inputs,
    out_dir,
    report_path,
    config_path,
    filter_topic,
    filter_partitions,
    start_time,
    end_time,
    kafka_version,
    layout,
    broker_from_path,
    timezone,
    master,
    conf,
    cluster_from_path,
    clock_skew,
    use_lark,
    min_isr,
    describe_files,
    describe_at,
    show,
    output_format,
    debug,
):
    """Parse, replay, check and report in one go: the first command to run after an incident.

    Writes the tables of "parse" and "replay" under DIR, DIR/verdict.json (the expectations'
    verdict) and the HTML report, then prints the time window, the controllers and failovers, the
    findings by severity with the most severe ones, the verdict and where the report is.
    Exit code 1 when expectations failed, 2 on an input or usage error. With --format json or csv,
    stdout holds only the findings list (the rest goes to stderr).

    \b
    Examples:
      kafka-forensics analyze sample_logs/kafka-2.4-controller-failover --out out/
      kafka-forensics analyze logs/ --out out/ --topic orders --start-time "2024-03-04 10:00:00,000"
      kafka-forensics analyze logs/ --out out/ --show 50 --format csv > findings.csv
    """
    fmt = resolve_format(output_format)
    out = make_console(stderr=True) if is_machine(fmt) else console

    def action():
        import dataclasses

        from kafka_forensics.jobs.analyze_job import run_analyze
        from kafka_forensics.jobs.check_job import load_check_config
        from kafka_forensics.jobs.engine import DRIVER, choose_engine
        from kafka_forensics.jobs.filters import event_filter_from
        from kafka_forensics.jobs.replay_job import ReplayOptions
        from kafka_forensics.jobs.spark_session import build_session
        from kafka_forensics.jobs.warm_imports import CHECK_MODULES, import_in_background

        options = parse_options_from(kafka_version, layout, broker_from_path, timezone, use_lark)
        flt = event_filter_from(filter_topic, filter_partitions, start_time, end_time, timezone)
        ropts = ReplayOptions(
            kafka_version=kafka_version,
            cluster_from_path=cluster_from_path,
            clock_skew_seconds=clock_skew,
            event_filter=flt if flt.active else None,
        )
        config = load_check_config(config_path)
        report = report_path or f"{out_dir.rstrip('/')}/report.html"
        out.print(
            f"[bold]kafka-forensics analyze[/bold]: {len(inputs)} input(s) → {escape(out_dir)}"
            + (f" [dim]({escape(flt.describe())})[/dim]" if flt.active else "")
        )
        settings = parse_conf(conf)
        engine = choose_engine([*inputs, *describe_files], out_dir, master, settings, written=[report])
        if engine == DRIVER:  # a local run that fits: every stage in this process, no JVM (jobs/engine.py)
            spark = None
        else:
            warming = import_in_background(CHECK_MODULES)  # GX imports beside the JVM's start
            spark = build_session(master, settings, inputs=inputs)
            warming.join()
        ropts = dataclasses.replace(
            ropts,
            **evidence_replay_options(spark, min_isr, describe_files, describe_at, timezone),
        )
        progress = _StageProgress(spark, out)
        try:
            result = run_analyze(
                spark,
                list(inputs),
                out_dir,
                report,
                options,
                ropts,
                config,
                top_findings=show,
                progress=progress,
            )
        finally:
            progress.close()
        print_summary(result, out, fmt)
        return result

    result = run_guarded(debug, action)
    raise SystemExit(result.exit_code)


def _ts(value) -> str:
    return "?" if value is None else value.strftime("%Y-%m-%d %H:%M:%S UTC")


def print_impact(impact: dict, console: Console = console) -> None:
    """The impact totals per cluster and kind (replay_summary.json's ``impact``): partitions, episodes (open
    ones still held when the logs end, counted to the last line), seconds in all and the longest episode."""
    from kafka_forensics.replay.impact import KINDS

    if not any(impact.values()):
        console.print("impact      no partition unavailable, under-replicated or under min ISR in these logs")
        return
    for cluster in sorted(impact):
        label = f" (cluster {escape(cluster)})" if cluster else ""
        for kind in (k for k in KINDS if k in impact[cluster]):
            t = impact[cluster][kind]
            still = f", {t['open_episodes']} open at the end of the logs" if t["open_episodes"] else ""
            console.print(
                f"impact      {kind}{label}: {t['partitions']:,} partition(s), {t['episodes']:,} episode(s){still}; "
                f"{t['seconds']:,.1f} s in all, longest {t['longest_seconds']:,.1f} s ({escape(t['longest'])})"
            )


def print_summary(result, console: Console = console, output_format: str = "table") -> None:
    first, last = result.window
    console.print(f"window      {_ts(first)} → {_ts(last)}")
    p = result.parse
    console.print(
        f"lines       {p.lines_read:,} read = {p.records:,} records + {p.continuation_lines:,} continuation "
        f"+ {p.quarantined:,} quarantined ({'reconciled' if p.reconciled else 'NOT reconciled'})"
    )
    for c in result.controllers:
        label = f" (cluster {escape(c['cluster'])})" if c["cluster"] else ""
        console.print(
            f"controllers {', '.join(map(str, c['ids']))}{label}: {c['epochs']} epoch(s) "
            f"{c['first_epoch']}..{c['last_epoch']}, {c['failovers']} failover(s)"
        )
    if not result.controllers:
        console.print("controllers none seen in these logs")
    print_impact(getattr(result.replay, "impact", None) or {}, console)
    sev = ", ".join(f"[{_SEVERITY_STYLE[s]}]{n:,} {s}[/{_SEVERITY_STYLE[s]}]" for s, n in result.by_severity.items())
    console.print(f"findings    {sum(result.by_severity.values()):,} episode(s)" + (f" ({sev})" if sev else ""))
    if result.top_findings:
        emit(
            "analyze", [findings_listing(result.top_findings, title="the most severe findings")], output_format, console
        )
    verdict = result.verdict
    console.print(
        "verdict     "
        + (
            "[green]PASSED[/green]: every expectation met"
            if verdict.passed
            else "[bold red]FAILED[/bold red]: expectations not met"
        )
        + f" [dim]({escape(result.out_dir.rstrip('/') or result.out_dir)}/verdict.json)[/dim]"
    )
    failed = list(getattr(verdict, "failed_expectations", []) or [])
    for name in failed[:5]:
        console.print(f"            [red]✗[/red] {escape(str(name))}")
    if len(failed) > 5:
        console.print(f"            … and {len(failed) - 5} more")
    console.print(f"report      {escape(result.report.path)} ({result.report.size_bytes / 1_000_000:.1f} MB)")
