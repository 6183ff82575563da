"""``kafka-forensics parse``: logs → events / quarantine Parquet, with the reconciliation."""

from __future__ import annotations

import click
from rich.table import Table

from .common import debug_option, driver_engine_line, make_console, run_guarded
from .options import input_options, parse_conf, parse_options_from

console = make_console()


@click.command()
@click.argument("inputs", nargs=-1, required=True)
@click.option("--out", "out_dir", required=True, help="Output directory (local, hdfs://, s3a://).")
@input_options
@click.option(
    "--lark", "use_lark", is_flag=True, help="Use the plain-Lark path instead of the fast path (slow; for comparison)."
)
@debug_option
def parse(inputs, out_dir, kafka_version, layout, broker_from_path, timezone, master, conf, use_lark, debug):
    """Parse Kafka logs into typed events.

    INPUTS are files, directories or globs (local, hdfs://, s3a://); directories are searched
    for state-change.log*, controller.log*, server.log* and kafka-*.log*, plain or .gz.

    \b
    Example:
      kafka-forensics parse sample_logs/kafka-2.4-controller-failover --out out/
    Writes out/events/, out/quarantine/, out/files/ (Parquet) and out/parse_summary.json.
    """

    def action():
        from kafka_forensics.core.errors import InputError
        from kafka_forensics.jobs.engine import DRIVER, choose_engine

        options = parse_options_from(kafka_version, layout, broker_from_path, timezone, use_lark)
        spark_conf = parse_conf(conf)
        if choose_engine(list(inputs), out_dir, master, spark_conf) == DRIVER:
            from kafka_forensics.jobs.parse_driver import parse_in_driver

            console.print(driver_engine_line("parse", "parsed"))
            summary = parse_in_driver(list(inputs), out_dir, options)
        else:
            from kafka_forensics.jobs.parse_job import run_parse
            from kafka_forensics.jobs.spark_session import build_session

            console.print(f"[bold]kafka-forensics parse[/bold]: starting Spark ({master or 'local[*]'})")
            spark = build_session(master, spark_conf)
            summary = run_parse(spark, list(inputs), out_dir, options)
        _print_summary(summary)
        if summary.read_errors:
            raise InputError(
                f"{len(summary.read_errors)} file(s) could not be read completely "
                f"(their readable lines were parsed): " + "; ".join(summary.read_errors[:3])
            )
        return summary

    run_guarded(debug, action)


def _print_summary(summary) -> None:
    status = "[green]reconciled[/green]" if summary.reconciled else "[red]NOT reconciled[/red]"
    console.print(
        f"lines read {summary.lines_read:,} = records {summary.records:,} + continuation lines "
        f"{summary.continuation_lines:,} + quarantined {summary.quarantined:,}  ({status})"
    )
    if summary.out_of_order:
        console.print(
            f"{summary.out_of_order:,} record(s) have a timestamp earlier than the record before them in their file (kept, flagged ts_out_of_order)"
        )
    if summary.ts_invalid:
        console.print(
            f"{summary.ts_invalid:,} record(s) have a timestamp that is not a real instant (kept with ts null, attrs.ts_invalid says why)"
        )
    repaired = [
        f"{n:,} {what}"
        for n, what in (
            (summary.bom_lines, "with a byte-order mark (removed)"),
            (summary.ansi_lines, "with ANSI escapes (removed)"),
            (summary.control_lines, "with control characters (kept)"),
        )
        if n
    ]
    if repaired:
        console.print("lines " + ", ".join(repaired) + " (recorded in attrs and the files table)")
    table = Table(title="events by type", show_edge=False)
    table.add_column("event_type")
    table.add_column("count", justify="right")
    for name, count in sorted(summary.by_event_type.items(), key=lambda kv: (-kv[1], kv[0])):
        table.add_row(name, f"{count:,}")
    console.print(table)
    console.print("by dialect: " + ", ".join(f"{k}={v:,}" for k, v in sorted(summary.by_dialect.items())))
    if summary.quarantine_reasons:
        console.print("quarantine reasons: " + "; ".join(f"{v:,} × {k}" for k, v in summary.quarantine_reasons.items()))
    console.print(f"wrote {summary.out_dir}/events, quarantine, files (Parquet) and parse_summary.json")
