"""``kafka-forensics replay | timeline | describe``: replay the logs, tell one partition's story,
or say what ``kafka-topics --describe`` would have printed at an instant."""

from __future__ import annotations

import functools
from typing import Callable

import click
from rich.table import Table

from kafka_forensics.replay.findings import SEVERITIES

from .common import debug_option, driver_engine_line, make_console, run_guarded
from .listings import describe_listing, findings_listing, timeline_listings
from .options import filter_options, input_options, parse_conf, parse_options_from
from .output import emit, format_option, is_machine, resolve_format

console = make_console()
_SEVERITY_STYLE = {"critical": "bold red", "error": "red", "warning": "yellow", "info": "dim"}


def replay_options(func: Callable) -> Callable:
    """--cluster-from-path, --clock-skew (besides the parse input options)."""
    decorators = [
        click.option(
            "--cluster-from-path",
            default=None,
            metavar="REGEX",
            help="Regex whose last group in a file path names the cluster, when the inputs hold "
            "several clusters (each is replayed on its own). Default: one cluster.",
        ),
        click.option(
            "--clock-skew",
            "clock_skew",
            default=2.0,
            show_default=True,
            type=float,
            metavar="SECONDS",
            help="Clock difference between brokers to tolerate before two brokers' timestamps "
            "are trusted to be ordered (zombie-controller and epoch-regression checks).",
        ),
        click.option("--lark", "use_lark", is_flag=True, help="Parse with plain Lark instead of the fast path."),
    ]
    return functools.reduce(lambda f, d: d(f), reversed(decorators), func)


def evidence_options(func: Callable) -> Callable:
    """--min-isr, --describe, --describe-at: what the operator knows besides the logs (impact, final-state oracle)."""
    decorators = [
        click.option(
            "--min-isr",
            "min_isr",
            multiple=True,
            metavar="N|TOPIC=N",
            help="min.insync.replicas for the impact table's under_min_isr episodes, for every topic (N) or one "
            "(TOPIC=N), repeatable; overrides what the logs state (broker config dump, 'Created log' lines).",
        ),
        click.option(
            "--describe",
            "describe_files",
            multiple=True,
            metavar="FILE",
            help="Output of 'kafka-topics --describe' (and/or 'kafka-metadata-quorum describe --status') taken "
            "during the incident, repeatable: compared with the replayed state at its time "
            "(final_state_mismatch findings).",
        ),
        click.option(
            "--describe-at",
            "describe_at",
            multiple=True,
            metavar="TIME",
            help="When each --describe FILE was taken, in order, in --timezone (e.g. '2024-03-04 10:06:00,000'); "
            "default: the file's modification time.",
        ),
    ]
    return functools.reduce(lambda f, d: d(f), reversed(decorators), func)


def evidence_replay_options(spark, min_isr, describe_files, describe_at, timezone) -> dict:
    """The ReplayOptions fields of ``evidence_options`` (snapshots: local files read here, any other path
    with Spark; ``spark`` None: local files only, as the driver engine reads them)."""
    from kafka_forensics.core.errors import UsageError
    from kafka_forensics.jobs.final_state_job import read_snapshot
    from kafka_forensics.jobs.impact_job import MinIsrOption
    from kafka_forensics.replay.impact import parse_min_isr_option

    try:
        default, topics = parse_min_isr_option(min_isr)
    except ValueError as err:
        raise UsageError(str(err)) from None
    if len(describe_at) > len(describe_files):
        raise UsageError(f"{len(describe_at)} --describe-at for {len(describe_files)} --describe FILE")
    times = [parse_instant(t, timezone, "--describe-at") for t in describe_at]
    times += [None] * (len(describe_files) - len(times))
    snapshots = tuple(read_snapshot(spark, path, at) for path, at in zip(describe_files, times))
    return {"min_isr": MinIsrOption(default, topics), "snapshots": snapshots}


def _options(kafka_version, cluster_from_path, clock_skew, topic=None, partition=None):
    from kafka_forensics.jobs.replay_job import ReplayOptions, validate_options

    opts = ReplayOptions(
        kafka_version=kafka_version,
        cluster_from_path=cluster_from_path,
        clock_skew_seconds=clock_skew,
        topic=topic,
        partition=partition,
    )
    validate_options(opts)
    return opts


@click.command("replay")
@click.argument("inputs", nargs=-1, required=True)
@click.option("--out", "out_dir", required=True, help="Output directory (local, hdfs://, s3a://).")
@filter_options
@input_options
@replay_options
@evidence_options
@click.option("--show", default=20, show_default=True, metavar="N", help="Print the N most severe findings.")
@format_option
@debug_option
def replay(
    inputs,
    out_dir,
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
    """Replay Kafka logs through the controller state machines of their era.

    Parses INPUTS (as "parse" does, writing DIR/events), orders each partition's lines by
    controller epoch, then time, then file position, replays them and writes DIR/partition_timeline,
    replica_timeline, controllers, brokers, findings (Parquet), DIR/findings.jsonl,
    DIR/replay_summary.json and DIR/story.json (the incident in words, as "story" prints it).

    \b
    With --format json or csv, stdout holds only the findings list (the rest goes to stderr).

    \b
    Examples:
      kafka-forensics replay sample_logs/kafka-2.4-controller-failover --out out/
      kafka-forensics replay sample_logs/real-2.4-zk-unclean-election --out out/ --format json | jq '.findings[]'
    """
    fmt = resolve_format(output_format)
    out = make_console(stderr=True) if is_machine(fmt) else console

    def action():
        import dataclasses

        from kafka_forensics.jobs.engine import DRIVER, choose_engine
        from kafka_forensics.jobs.filters import event_filter_from

        options = parse_options_from(kafka_version, layout, broker_from_path, timezone, use_lark)
        ropts = _options(kafka_version, cluster_from_path, clock_skew)
        flt = event_filter_from(filter_topic, filter_partitions, start_time, end_time, timezone)
        ropts = dataclasses.replace(ropts, event_filter=flt if flt.active else None)
        settings = parse_conf(conf)
        if choose_engine([*inputs, *describe_files], out_dir, master, settings) == DRIVER:
            from kafka_forensics.jobs.frames import duckdb_session
            from kafka_forensics.jobs.replay_driver import run_replay_in_driver

            out.print(driver_engine_line("replay", "replayed"))
            ropts = dataclasses.replace(
                ropts, **evidence_replay_options(None, min_isr, describe_files, describe_at, timezone)
            )
            parsed, summary = run_replay_in_driver(list(inputs), out_dir, options, ropts)
            tables = duckdb_session()
        else:
            from kafka_forensics.jobs.replay_job import run_replay
            from kafka_forensics.jobs.spark_session import build_session

            out.print(f"[bold]kafka-forensics replay[/bold]: starting Spark ({master or 'local[*]'})")
            tables = build_session(master, settings)
            ropts = dataclasses.replace(
                ropts, **evidence_replay_options(tables, min_isr, describe_files, describe_at, timezone)
            )
            parsed, summary = run_replay(tables, list(inputs), out_dir, options, ropts)
        out.print(
            f"lines read {parsed.lines_read:,} = records {parsed.records:,} + continuation lines "
            f"{parsed.continuation_lines:,} + quarantined {parsed.quarantined:,}"
            f"  ({'reconciled' if parsed.reconciled else 'NOT reconciled'})"
        )
        _print_replay_summary(summary, out)
        if show:
            emit("replay", [top_findings_listing(tables, out_dir, show)], fmt, out)
        return summary

    run_guarded(debug, action)


def _print_replay_summary(summary, out) -> None:
    out.print(
        f"{summary.partitions:,} partition(s), {summary.partition_intervals:,} partition intervals, "
        f"{summary.replica_intervals:,} replica intervals, {summary.controllers} controller epoch(s), "
        f"{summary.broker_intervals} broker interval(s)"
    )
    table = Table(title=f"{summary.findings:,} finding(s), one per episode", show_edge=False)
    table.add_column("rule")
    for sev in SEVERITIES:
        table.add_column(sev, justify="right", style=_SEVERITY_STYLE[sev])
    for rule, counts in summary.findings_by_rule.items():
        table.add_row(rule, *[f"{counts.get(s, 0):,}" if counts.get(s) else "" for s in SEVERITIES])
    out.print(table)
    out.print(
        f"wrote {summary.out_dir}/partition_timeline, replica_timeline, controllers, brokers, findings "
        f"(Parquet), findings.jsonl and replay_summary.json"
    )


def top_findings_listing(spark, out_dir: str, n: int):
    from kafka_forensics.jobs.replay_job import top_findings

    return findings_listing(top_findings(spark, out_dir, n), title=f"the {n} most severe finding(s)")


@click.command("timeline")
@click.argument("inputs", nargs=-1, required=True)
@click.option("--topic", required=True, help="Topic name.")
@click.option("--partition", "partition", required=True, type=int, help="Partition number.")
@click.option("--cluster", "cluster_name", default=None, help="With --cluster-from-path: which cluster.")
@input_options
@replay_options
@format_option
@debug_option
def timeline(
    inputs,
    topic,
    partition,
    cluster_name,
    kafka_version,
    layout,
    broker_from_path,
    timezone,
    master,
    conf,
    cluster_from_path,
    clock_skew,
    use_lark,
    output_format,
    debug,
):
    """One partition's story: every state interval with its leader, ISR, epochs and the log line
    that caused it, then its replicas and findings.

    \b
    \b
    Examples:
      kafka-forensics timeline sample_logs/kafka-2.4-controller-failover --topic orders --partition 0
      kafka-forensics timeline sample_logs/kafka-2.4-controller-failover --topic orders --partition 0 --format csv
    """
    fmt = resolve_format(output_format)

    def action():
        from kafka_forensics.jobs.inspect_job import run_timeline
        from kafka_forensics.jobs.spark_session import build_session

        options = parse_options_from(kafka_version, layout, broker_from_path, timezone, use_lark)
        ropts = _options(kafka_version, cluster_from_path, clock_skew, topic=topic, partition=partition)
        spark = build_session(master, parse_conf(conf))
        story = run_timeline(spark, list(inputs), options, ropts, topic, partition, cluster_name)
        listings = timeline_listings(topic, partition, story.rows, story.replicas, story.findings, story.lines)
        emit("timeline", listings, fmt, console)

    run_guarded(debug, action)


@click.command("describe")
@click.argument("inputs", nargs=-1, required=True)
@click.option(
    "--at",
    "at_text",
    required=True,
    metavar="TIME",
    help='The instant, in the logs\' time zone (--timezone), e.g. "2021-03-04 10:15:23,456".',
)
@click.option("--topic", default=None, help="Only this topic.")
@input_options
@replay_options
@format_option
@debug_option
def describe(
    inputs,
    at_text,
    topic,
    kafka_version,
    layout,
    broker_from_path,
    timezone,
    master,
    conf,
    cluster_from_path,
    clock_skew,
    use_lark,
    output_format,
    debug,
):
    """What kafka-topics --describe would have printed at an instant: Topic / Partition / Leader /
    Replicas / Isr as the logs say they were then, with the controller epoch, or "unknown" when no
    line before that instant says.

    \b
    With --format text (the default when stdout is not a terminal) each partition is one line,
    as kafka-topics prints it: Topic: t<TAB>Partition: 0<TAB>Leader: 2<TAB>Replicas: 1,2,3<TAB>Isr: 2,3,
    then LeaderEpoch, ControllerEpoch, State, Since and Evidence (file:line).

    \b
    Examples:
      kafka-forensics describe sample_logs/kafka-2.4-controller-failover --at "2024-03-04 10:06:00"
      kafka-forensics describe sample_logs/kafka-2.4-controller-failover --at "2024-03-04 10:06:00" --format json
    """
    fmt = resolve_format(output_format)

    def action():
        from kafka_forensics.jobs.inspect_job import run_describe
        from kafka_forensics.jobs.spark_session import build_session

        at = parse_instant(at_text, timezone)
        options = parse_options_from(kafka_version, layout, broker_from_path, timezone, use_lark)
        ropts = _options(kafka_version, cluster_from_path, clock_skew, topic=topic)
        spark = build_session(master, parse_conf(conf))
        state = run_describe(spark, list(inputs), options, ropts, at)
        emit("describe", [describe_listing(at, state.rows, state.later, state.contexts, state.last)], fmt, console)

    run_guarded(debug, action)


def parse_instant(text: str, timezone: str = "UTC", option: str = "--at"):
    """``2021-03-04 10:15:23,456`` (log4j), ``…23.456``, ``2021-03-04T10:15:23Z``… -> aware UTC datetime."""
    import datetime as dt
    import zoneinfo

    from kafka_forensics.core.errors import UsageError

    raw = text.strip().replace(",", ".")
    if raw.endswith("Z"):
        raw, timezone = raw[:-1], "UTC"
    try:
        value = dt.datetime.fromisoformat(raw)
    except ValueError:
        raise UsageError(f"{option} {text!r} is not a time like 2021-03-04 10:15:23,456") from None
    if value.tzinfo is None:
        tz = dt.timezone.utc if timezone.upper() == "UTC" else zoneinfo.ZoneInfo(timezone)
        value = value.replace(tzinfo=tz)
    return value.astimezone(dt.timezone.utc)
