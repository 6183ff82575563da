"""``kafka-forensics merge``: all brokers' lines in one time order, each with its broker."""

from __future__ import annotations

import os
import sys

import click

from .common import debug_option, make_console, run_guarded
from .options import filter_options, input_options, parse_conf, parse_options_from


def _inputs(inputs: tuple[str, ...], logs: str | None, logs_regex: str | None) -> list[str]:
    from kafka_forensics.core.errors import UsageError
    from kafka_forensics.jobs.merge_compat import files_from_regex

    paths = list(inputs)
    if logs:
        paths += [p for p in logs.split(",") if p]
    if logs_regex:
        paths += files_from_regex(logs_regex)
    if not paths:
        raise UsageError(
            "give the logs to merge: INPUT..., --logs file1,file2 or --logs-regex '/dir/state-change.log.*'"
        )
    return paths


@click.command("merge")
@click.argument("inputs", nargs=-1)
@click.option(
    "--logs",
    default=None,
    metavar="FILE1,FILE2",
    help="Comma-separated log files (StateChangeLogMerger's --logs); adds to INPUT.",
)
@click.option(
    "--logs-regex",
    default=None,
    metavar="DIR/REGEX",
    help="Files of DIR whose name REGEX finds in, e.g. '/var/log/kafka/state-change.log.*' "
    "(StateChangeLogMerger's --logs-regex); adds to INPUT.",
)
@filter_options
@click.option(
    "--clock-skew",
    "clock_skew",
    multiple=True,
    metavar="BROKER=SECONDS",
    help="Seconds to add to one broker's timestamps before ordering (its clock ran that much "
    "behind; negative if ahead). Repeatable. Lines are printed unchanged.",
)
@click.option("--plain", is_flag=True, help="Print the lines as logged, without the 'broker N | file:line |' column.")
@click.option(
    "--kafka-compat",
    is_flag=True,
    help="Behave exactly like Kafka's StateChangeLogMerger: only lines with a [topic,N], no stack "
    "traces, no broker column, its heap order for equal timestamps (local files only).",
)
@click.option(
    "--output",
    "-o",
    "output",
    default=None,
    type=click.Path(dir_okay=False),
    help="Write the merge to this file instead of standard output.",
)
@input_options
@debug_option
def merge(
    inputs,
    logs,
    logs_regex,
    filter_topic,
    filter_partitions,
    start_time,
    end_time,
    clock_skew,
    plain,
    kafka_compat,
    output,
    kafka_version,
    layout,
    broker_from_path,
    timezone,
    master,
    conf,
    debug,
):
    """Merge the logs of several brokers into one time-ordered view.

    Every record of every Kafka era (0.8 to 4.x, ZooKeeper or KRaft) comes out once, ordered by
    time, then file, then line (stable for equal timestamps), with its broker and file:line and
    its stack trace under it. Covers every option of Kafka's kafka.tools.StateChangeLogMerger
    (removed in Kafka 4.0); --kafka-compat reproduces its output exactly.

    \b
    Examples:
      kafka-forensics merge broker1/state-change.log broker2/state-change.log --topic orders --partitions 0,1
      kafka-forensics merge logs/ --start-time "2024-03-04 10:05:00,000" --end-time "2024-03-04 10:06:00,000"
      kafka-forensics merge --kafka-compat --logs-regex '/var/log/kafka/state-change.log.*' --topic orders
    """

    def action():
        from kafka_forensics.jobs.filters import event_filter_from

        paths = _inputs(inputs, logs, logs_regex)
        flt = event_filter_from(filter_topic, filter_partitions, start_time, end_time, timezone)
        out = open(output, "w", encoding="utf-8") if output else sys.stdout
        try:
            if kafka_compat:
                _compat(paths, flt, start_time, end_time, out)
            else:
                _spark_merge(
                    paths, flt, clock_skew, plain, out, kafka_version, layout, broker_from_path, timezone, master, conf
                )
            out.flush()
        except BrokenPipeError:  # `merge ... | head`: the reader is done
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        finally:
            if output:
                out.close()

    run_guarded(debug, action)


def _compat(paths, flt, start_time, end_time, out) -> None:
    from kafka_forensics.jobs.merge_compat import merge_compat

    for line in merge_compat(paths, flt.topic, flt.partitions, start_time, end_time):
        out.write(line + "\n")


def _spark_merge(
    paths, flt, clock_skew, plain, out, kafka_version, layout, broker_from_path, timezone, master, conf
) -> None:
    from kafka_forensics.jobs.merge_job import (
        MergeOptions,
        iter_merged,
        merge_frame,
        parse_clock_offsets,
        require_records,
        write_merged,
    )
    from kafka_forensics.jobs.spark_session import build_session

    status = make_console(stderr=True)
    options = parse_options_from(kafka_version, layout, broker_from_path, timezone)
    mopts = MergeOptions(event_filter=flt, clock_offsets=parse_clock_offsets(clock_skew))
    spark = build_session(master, parse_conf(conf))
    counts = write_merged(iter_merged(merge_frame(spark, paths, options, mopts)), out, annotate=not plain)
    require_records(counts, flt, paths)
    brokers = sorted(b for b in counts.brokers if b is not None)
    status.print(
        f"[dim]merged {counts.records:,} record(s) from broker(s) {', '.join(map(str, brokers)) or '?'}"
        + (f" ({flt.describe()})" if flt.active else "")
        + "[/dim]"
    )
