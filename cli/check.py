"""``kafka-forensics check``: replay the logs if needed (``jobs/check_inputs.py``), run the GX suites,
write the verdict."""

from __future__ import annotations

import sys

import click
from rich.markup import escape

from .common import debug_option, driver_engine_line, make_console, run_guarded
from .options import input_options, parse_conf, parse_options_from
from .replay import replay_options

console = make_console()


@click.command("check")
@click.argument("inputs", nargs=-1, required=False)
@click.option("--out", "out_dir", required=True, help="Output directory (local, hdfs://, s3a://).")
@click.option(
    "--config",
    "config_path",
    default=None,
    metavar="FILE",
    help="TOML configuration (suites, thresholds, severities); default: the bundled default_check.toml.",
)
@click.option(
    "--reuse", is_flag=True, help="Use the replay tables already in DIR, without checking which inputs made them."
)
@input_options
@replay_options
@debug_option
def check(
    inputs,
    out_dir,
    config_path,
    reuse,
    kafka_version,
    layout,
    broker_from_path,
    timezone,
    master,
    conf,
    cluster_from_path,
    clock_skew,
    use_lark,
    debug,
):
    """Check Kafka logs with Great Expectations suites and write a verdict a scheduler can act on.

    Replays INPUTS into DIR (as "replay" does) unless DIR already holds the replay of the same
    inputs, then runs the suites (events, timelines, failover) and writes DIR/validation/<suite>.json,
    DIR/data_docs/index.html and DIR/verdict.json (always, also on errors). A local run that fits in
    memory (local INPUTS, or with --reuse a local DIR) runs without Spark (README, "Engines").

    \b
    Exit codes: 0 every expectation met; 1 expectations failed; 2 input or configuration error.
    Example:
      kafka-forensics check sample_logs/sim-2.8-zombie-controller --out out/
    """
    state: dict = {"spark": None, "config": None, "info": {"inputs": list(inputs)}}

    def action():
        from kafka_forensics.core.errors import UsageError
        from kafka_forensics.jobs.check_inputs import inputs_fingerprint, replay_for_check
        from kafka_forensics.jobs.check_job import load_check_config, run_check
        from kafka_forensics.jobs.engine import DRIVER, choose_dir_engine, choose_engine

        state["config"] = config = load_check_config(config_path)
        if not inputs and not reuse:
            raise UsageError("name the log INPUTS to check, or give --reuse to check the replay already in --out")
        options = parse_options_from(kafka_version, layout, broker_from_path, timezone, use_lark)
        from .replay import _options

        ropts = _options(kafka_version, cluster_from_path, clock_skew)
        fingerprint = inputs_fingerprint(list(inputs), options, ropts)
        state["info"] = {
            "inputs": list(inputs),
            "config": config.source,
            "parse_options": fingerprint["parse_options"],
            "replay_options": fingerprint["replay_options"],
            "files": len(fingerprint["files"]),
        }
        settings = parse_conf(conf)
        replays = bool(inputs) and not reuse  # else the check reads the tables already in DIR
        if (
            choose_engine(list(inputs), out_dir, master, settings)
            if replays
            else choose_dir_engine(out_dir, master, settings)
        ) == DRIVER:
            console.print(driver_engine_line("check", "checked"))
            spark = None
        else:
            from kafka_forensics.jobs.spark_session import build_session
            from kafka_forensics.jobs.warm_imports import CHECK_MODULES, import_in_background

            console.print(f"[bold]kafka-forensics check[/bold]: starting Spark ({master or 'local[*]'})")
            warming = import_in_background(CHECK_MODULES)  # GX imports beside the JVM's start
            state["spark"] = spark = build_session(master, settings)
            warming.join()
        replayed = replay_for_check(spark, list(inputs), out_dir, options, ropts, fingerprint, reuse)
        state["info"]["replay"] = "computed" if replayed else "reused"
        if replayed is None:
            console.print(f"using the replay tables in {escape(out_dir)}")
        else:
            parsed, summary = replayed
            console.print(
                f"replayed {parsed.lines_read:,} lines: {summary.partitions:,} partition(s), "
                f"{summary.findings:,} finding(s)"
            )
        verdict = run_check(spark, out_dir, config, state["info"])
        _print_verdict(verdict)
        return verdict

    def guarded():
        try:
            return action()
        except BaseException as err:
            _write_error_verdict(out_dir, err, state)
            raise

    verdict = run_guarded(debug, guarded)
    if verdict.exit_code:
        sys.exit(verdict.exit_code)


def _write_error_verdict(out_dir: str, err: BaseException, state: dict) -> None:
    """An error before or during the check still leaves a verdict.json (unless even that fails)."""
    if isinstance(err, (KeyboardInterrupt, SystemExit)):
        return
    from kafka_forensics.jobs.check_job import error_verdict, write_verdict
    from kafka_forensics.jobs.fs import local_path

    spark = state["spark"]
    try:
        if spark is None and local_path(out_dir) is None:
            from kafka_forensics.jobs.spark_session import build_session

            spark = build_session()
        write_verdict(spark, error_verdict(out_dir, err, state["config"], state["info"], spark))
    except Exception as write_err:
        click.echo(f"kafka-forensics: could not write {out_dir}/verdict.json: {write_err}", err=True)


def _print_verdict(verdict) -> None:
    for suite, entry in verdict.suites.items():
        status = "[green]met[/green]" if entry["success"] else "[red]FAILED[/red]"
        console.print(f"suite [bold]{suite}[/bold]: {status} ({entry['evaluated']} expectation(s))")
        for key, exp in entry["expectations"].items():
            if exp["success"]:
                continue
            style = "red" if f"{suite}.{key}" in verdict.failed_expectations else "yellow"
            count = exp.get("unexpected_count")
            console.print(
                f"  [{style}]{exp['severity']:<8}[/{style}] {key}"
                + (f" ({count} offending row(s))" if count is not None else "")
                + (f" error: {escape(str(exp['error']))}" if exp.get("error") else "")
            )
            for row in exp["samples"]:
                where = _where(row)
                console.print(
                    f"           [dim]{escape(str(row.get('evidence')))}[/dim] {escape(where)}"
                    f"{escape(str(row.get('detail') or row.get('value') or ''))}"
                )
    outcome = "[green]PASSED[/green]" if verdict.passed else "[red]FAILED[/red]"
    console.print(
        f"check {outcome}: wrote {escape(verdict.out_dir)}/verdict.json, validation/*.json, data_docs/index.html"
    )


def _where(row: dict) -> str:
    if row.get("topic") is None:
        return ""
    text = f"{row['topic']}-{row.get('partition')}"
    if row.get("replica") is not None:
        text += f" replica {row['replica']}"
    return text + (f" at {row['ts']}" if row.get("ts") else "") + ": "


__all__ = ["check"]
