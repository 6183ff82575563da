"""``kafka-forensics report DIR --out report.html``: the on-call incident report of a replay."""

from __future__ import annotations

import click
from rich.markup import escape

from .common import debug_option, driver_engine_line, make_console, run_guarded
from .options import parse_conf

console = make_console()


@click.command("report")
@click.argument("out_dir", metavar="DIR")
@click.option("--out", "out_html", required=True, metavar="FILE", help="The HTML file to write (e.g. report.html).")
@click.option(
    "--top",
    "top",
    default=20,
    show_default=True,
    type=click.IntRange(min=0),
    metavar="N",
    help="Plot the N most affected partitions.",
)
@click.option("--master", default=None, help="Spark master (default local[*], or what spark-submit set).")
@click.option("--conf", "conf", multiple=True, metavar="K=V", help="Extra Spark configuration, repeatable.")
@debug_option
def report(out_dir, out_html, top, master, conf, debug):
    """Write one self-contained HTML incident report from a replay's output directory.

    Reads DIR/events, quarantine, files, partition_timeline, replica_timeline, controllers,
    brokers, findings (and DIR/verdict.json when "check" wrote one). The file embeds plotly.js and
    opens offline in any browser: summary, controller and broker lanes, the findings with their
    evidence lines, leader/ISR timelines of the most affected partitions, transition matrices,
    event rate and quarantine. Large inputs are aggregated in Spark; the report says what it left out.
    A local DIR whose run fits in memory is read in this process without Spark (README, "Engines").

    \b
    Example:
      kafka-forensics replay sample_logs/kafka-2.4-controller-failover --out out/
      kafka-forensics report out/ --out report.html
    """

    def action():
        from kafka_forensics.jobs.engine import DRIVER, choose_dir_engine
        from kafka_forensics.jobs.report_job import build_report

        settings = parse_conf(conf)
        if choose_dir_engine(out_dir, master, settings, written=[out_html]) == DRIVER:
            from kafka_forensics.jobs.frames import duckdb_session

            console.print(driver_engine_line("report", "built"))
            tables = duckdb_session()
        else:
            from kafka_forensics.jobs.spark_session import build_session

            tables = build_session(master, settings)
        summary = build_report(tables, out_dir, out_html, top_partitions=top)
        console.print(
            f"wrote {escape(summary.path)} ({summary.size_bytes / 1_000_000:.1f} MB): "
            f"{summary.findings_shown:,} of {summary.findings_total:,} finding(s), "
            f"{summary.partitions_shown:,} of {summary.partitions_total:,} partition(s)"
        )
        for sentence in summary.left_out:
            console.print(f"  left out: {escape(sentence)}")
        return summary

    run_guarded(debug, action)
