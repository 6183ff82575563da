"""``kafka-forensics check``: replay the logs if needed, run the GX suites, write the verdict.

Reuse rule: the replay tables already in DIR are used when DIR/check_inputs.json (written by an
earlier ``check`` after it replayed) records the same inputs - the same paths and, for local
files, the same names, sizes and modification times - and the same parse/replay options; or
when ``--reuse`` is given (then DIR's tables are trusted as they are, e.g. made by ``replay``).
Otherwise the inputs are parsed and replayed into DIR first.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import asdict

import click
from rich.markup import escape

from .common import debug_option, make_console, run_guarded
from .options import input_options, parse_conf, parse_options_from
from .replay import replay_options

console = make_console()
FINGERPRINT = "check_inputs.json"


def _local_listing(inputs: list[str]) -> list[list]:
    """(path, size, mtime_ns) of every local file under the inputs: what makes a replay stale."""
    out = []
    for given in inputs:
        if "://" in given and not given.startswith("file://"):
            continue
        root = given[len("file://"):] if given.startswith("file://") else given
        if os.path.isfile(root):
            paths = [root]
        else:
            paths = sorted(os.path.join(d, f) for d, _, files in os.walk(root) for f in files)
        for path in paths:
            st = os.stat(path)
            out.append([path, st.st_size, st.st_mtime_ns])
    return out


def inputs_fingerprint(inputs: list[str], parse_options, replay_options) -> dict:
    return {"inputs": list(inputs), "files": _local_listing(inputs),
            "parse_options": asdict(parse_options), "replay_options": asdict(replay_options)}


def _replay_is_current(spark, out_dir: str, fingerprint: dict) -> bool:
    from kafka_forensics.jobs.check_job import read_small_text

    stored = read_small_text(spark, f"{out_dir}/{FINGERPRINT}")
    try:
        return stored is not None and json.loads(stored) == json.loads(json.dumps(fingerprint))
    except ValueError:
        return False


@click.command("check")
@click.argument("inputs", nargs=-1, required=False)
@click.option("--out", "out_dir", required=True, help="Output directory (local, hdfs://, s3a://).")
@click.option("--config", "config_path", default=None, metavar="FILE",
              help="TOML configuration (suites, thresholds, severities); default: the bundled default_check.toml.")
@click.option("--reuse", is_flag=True, help="Use the replay tables already in DIR, without checking which inputs made them.")
@input_options
@replay_options
@debug_option
def check(inputs, out_dir, config_path, reuse, kafka_version, layout, broker_from_path, timezone, master, conf,
          cluster_from_path, clock_skew, use_lark, debug):
    """Check Kafka logs with Great Expectations suites and write a verdict a scheduler can act on.

    Replays INPUTS into DIR (as "replay" does) unless DIR already holds the replay of the same
    inputs, then runs the suites (events, timelines, failover) and writes DIR/validation/<suite>.json,
    DIR/data_docs/index.html and DIR/verdict.json (always, also on errors).

    \b
    Exit codes: 0 every expectation met; 1 expectations failed; 2 input or configuration error.
    Example:
      kafka-forensics check sample_logs/sim-1.1-zombie-controller --out out/
    """
    state: dict = {"spark": None, "config": None, "info": {"inputs": list(inputs)}}

    def action():
        from kafka_forensics.core.errors import UsageError

        from kafka_forensics.jobs.check_job import load_check_config, run_check
        from kafka_forensics.jobs.replay_job import run_replay
        from kafka_forensics.jobs.spark_session import build_session

        state["config"] = config = load_check_config(config_path)
        if not inputs and not reuse:
            raise UsageError("name the log INPUTS to check, or give --reuse to check the replay already in --out")
        options = parse_options_from(kafka_version, layout, broker_from_path, timezone, use_lark)
        from .replay import _options

        ropts = _options(kafka_version, cluster_from_path, clock_skew)
        fingerprint = inputs_fingerprint(list(inputs), options, ropts)
        state["info"] = {"inputs": list(inputs), "config": config.source,
                         "parse_options": fingerprint["parse_options"], "replay_options": fingerprint["replay_options"],
                         "files": len(fingerprint["files"])}
        console.print(f"[bold]kafka-forensics check[/bold]: starting Spark ({master or 'local[*]'})")
        state["spark"] = spark = build_session(master, parse_conf(conf))
        if reuse or _replay_is_current(spark, out_dir, fingerprint):
            state["info"]["replay"] = "reused"
            console.print(f"using the replay tables in {escape(out_dir)}")
        else:
            state["info"]["replay"] = "computed"
            parsed, summary = run_replay(spark, list(inputs), out_dir, options, ropts)
            from kafka_forensics.jobs.check_job import write_atomically

            write_atomically(spark, f"{out_dir}/{FINGERPRINT}", json.dumps(fingerprint, indent=2) + "\n")
            console.print(f"replayed {parsed.lines_read:,} lines: {summary.partitions:,} partition(s), "
                          f"{summary.findings:,} finding(s)")
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
    from kafka_forensics.jobs.check_job import error_verdict, is_local, write_verdict

    spark = state["spark"]
    try:
        if spark is None and not is_local(out_dir):
            from kafka_forensics.jobs.spark_session import build_session

            spark = build_session()
        write_verdict(spark, error_verdict(out_dir, err, state["config"], state["info"], spark))
    except Exception as write_err:  # noqa: BLE001 - report the original error, mention this one
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
            console.print(f"  [{style}]{exp['severity']:<8}[/{style}] {key}"
                          + (f" ({count} offending row(s))" if count is not None else "")
                          + (f" error: {escape(str(exp['error']))}" if exp.get("error") else ""))
            for row in exp["samples"]:
                where = _where(row)
                console.print(f"           [dim]{escape(str(row.get('evidence')))}[/dim] {escape(where)}"
                              f"{escape(str(row.get('detail') or row.get('value') or ''))}")
    outcome = "[green]PASSED[/green]" if verdict.passed else "[red]FAILED[/red]"
    console.print(f"check {outcome}: wrote {escape(verdict.out_dir)}/verdict.json, validation/*.json, data_docs/index.html")


def _where(row: dict) -> str:
    if row.get("topic") is None:
        return ""
    text = f"{row['topic']}-{row.get('partition')}"
    if row.get("replica") is not None:
        text += f" replica {row['replica']}"
    return text + (f" at {row['ts']}" if row.get("ts") else "") + ": "


__all__ = ["check", "inputs_fingerprint"]
