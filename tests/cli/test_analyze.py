"""``kafka-forensics analyze``: parse → replay → check → report in one command, its summary and exit codes."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from kafka_forensics.cli.main import main
from kafka_forensics.core.tables import TABLES
from kafka_forensics.jobs.analyze_job import AnalyzeResult, run_analyze
from kafka_forensics.jobs.replay_options import ReplayOptions
from kafka_forensics.jobs.stored_tables import stored_schema
from kafka_forensics.parsers.records import ParseOptions
from tests.support.check_diff import assert_same_check, broken_copy, duckdb_check_of
from tests.support.cli import without_a_jvm
from tests.support.engines import assert_report_engines_agree
from tests.support.outputs import canonical
from tests.support.paths import REPO

INCIDENT = REPO / "sample_logs" / "kafka-2.4-controller-failover"
WIDE = {"COLUMNS": "250"}


@pytest.fixture(scope="module")
def incident_run(spark, tmp_path_factory):
    out = tmp_path_factory.mktemp("analyze") / "out"
    result = CliRunner(env=WIDE).invoke(main, ["analyze", str(INCIDENT), "--out", str(out), "--show", "4"])
    return out, result


@pytest.mark.spark
def test_analyze_writes_every_stages_output(incident_run):
    out, result = incident_run
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    for produced in (
        "events",
        "partition_timeline",
        "findings",
        "findings.jsonl",
        "controllers",
        "verdict.json",
        "report.html",
    ):
        assert (out / produced).exists(), produced
    assert (out / "report.html").read_text("utf-8").lstrip().lower().startswith("<!doctype html")


@pytest.mark.spark
def test_a_zombie_controller_fails_the_expectations_with_exit_1(incident_run):
    out, result = incident_run
    verdict = json.loads((out / "verdict.json").read_text())
    assert verdict["passed"] is False and result.exit_code == 1 == verdict["exit_code"]
    assert "FAILED" in result.output
    # the report is built beside the check and reads the verdict last: it shows this one, not "not run"
    page = (out / "report.html").read_text("utf-8")
    assert '<span class="verdict-failed">failed</span>' in page and 'class="verdict-not-run"' not in page


@pytest.mark.spark
def test_summary_names_window_controllers_findings_and_report(incident_run):
    out, result = incident_run
    text = result.output
    for stage in ("parse", "replay", "check", "report"):
        assert f"✓ {stage}" in text, stage
    assert "window      2024-03-04 10:00:00 UTC → 2024-03-04 10:05:41 UTC" in text
    assert "controllers 1, 2: 2 epoch(s) 7..8, 1 failover(s)" in text
    findings = [json.loads(line) for line in (out / "findings.jsonl").read_text().splitlines()]
    assert f"findings    {len(findings)} episode(s) (" in text
    assert "concurrent_controllers" in text  # the error comes first among the shown ones
    assert text.index("concurrent_controllers") < text.index("stale_epoch_rejected")
    assert f"report      {out}/report.html" in text
    impact = json.loads((out / "replay_summary.json").read_text())["impact"][""]
    unavailable = impact["unavailable"]  # the failover left orders-2 without a leader
    assert (
        f"impact      unavailable: {unavailable['partitions']} partition(s), {unavailable['episodes']} episode(s)"
        in text
    )
    assert f"{unavailable['seconds']:,.1f} s in all, longest {unavailable['longest_seconds']:,.1f} s" in text


@pytest.mark.spark
def test_the_check_without_spark_writes_what_sparks_check_wrote(incident_run, tmp_path):
    out, _ = incident_run
    verdict = assert_same_check(out, duckdb_check_of(out, tmp_path / "duckdb"))
    assert verdict["failed_expectations"] and verdict["exit_code"] == 1  # the zombie controller's episodes


@pytest.mark.spark
def test_the_check_without_spark_fails_what_spark_fails_on_broken_tables(spark, incident_run, tmp_path):
    import dataclasses

    from kafka_forensics.jobs.check_job import load_check_config, run_check

    # only the suites of the tables broken_copy changes: the oracle is one more Spark check, kept short
    config = dataclasses.replace(load_check_config(None), suites=("events", "timelines"))
    broken = broken_copy(incident_run[0], tmp_path / "broken")
    run_check(spark, str(broken), config)  # the oracle
    verdict = assert_same_check(broken, duckdb_check_of(broken, tmp_path / "duckdb", config))
    # what each of broken_copy's changes breaks, built-in column expectations included
    assert verdict["failed_expectations"] == [
        "events.expect_ids_and_epochs_to_be_non_negative",
        "events.expect_state_names_to_exist_in_their_era",
        "events.expect_timestamps_to_be_parsed",
        "events.expect_column_values_to_not_be_null:event_type",
        "events.expect_column_values_to_be_in_set:level",
        "timelines.expect_timeline_transitions_to_be_legal_for_their_era",
        "timelines.expect_leader_to_be_in_isr",
        "timelines.expect_leader_epoch_to_never_decrease",
        "timelines.expect_controller_epoch_to_never_decrease",
    ]


@pytest.mark.spark
def test_missing_input_and_no_log_lines_exit_2_in_one_sentence(spark, tmp_path):
    runner = CliRunner()
    missing = runner.invoke(main, ["analyze", str(tmp_path / "nope"), "--out", str(tmp_path / "o")])
    assert missing.exit_code == 2 and "input not found" in missing.output and "Traceback" not in missing.output
    (tmp_path / "notes.log").write_text("hello\nthis is not kafka\n")
    junk = runner.invoke(main, ["analyze", str(tmp_path / "notes.log"), "--out", str(tmp_path / "o2")])
    assert junk.exit_code == 2 and "Traceback" not in junk.output


def test_bad_filter_or_config_exits_2_before_spark(tmp_path):
    runner = CliRunner()
    bad = runner.invoke(main, ["analyze", str(INCIDENT), "--out", str(tmp_path), "--partitions", "0"])
    assert bad.exit_code == 2 and "--partitions needs --topic" in bad.output
    missing_config = runner.invoke(
        main, ["analyze", str(INCIDENT), "--out", str(tmp_path), "--config", str(tmp_path / "none.toml")]
    )
    assert missing_config.exit_code == 2 and "none.toml" in missing_config.output


def test_exit_code_follows_the_verdict():
    result = AnalyzeResult(out_dir="o", report_path="o/report.html")
    assert result.exit_code == 0
    result.verdict = SimpleNamespace(passed=True, exit_code=0)
    assert result.exit_code == 0
    result.verdict = SimpleNamespace(passed=False, exit_code=1)
    assert result.exit_code == 1


@pytest.mark.spark
def test_every_table_is_stored_with_the_schema_its_readers_pass(spark, incident_run):
    """The jobs read tables with ``stored_schema`` (no footer job): it must be what the writers store."""
    out, _ = incident_run
    for table in TABLES:
        written = spark.read.parquet(str(out / table)).schema
        assert [(f.name, f.dataType) for f in written] == [(f.name, f.dataType) for f in stored_schema(table)], table


@pytest.mark.spark
def test_the_report_and_summary_on_duckdb_equal_sparks(spark, incident_run, tmp_path):
    """Spark is the oracle: analyze's report (verdict and story included), its model field by field, the summary
    and the findings listing, built again on DuckDB through SQLFrame (jobs/frames.py)."""
    out, _ = incident_run
    assert_report_engines_agree(spark, out, tmp_path, spark_html=out / "report.html")


@pytest.mark.spark
def test_the_driver_engine_leaves_what_the_spark_analyze_left(incident_run, tmp_path):
    """A short run without the JVM (jobs/engine.py): parse and replay in this process, check and report
    on DuckDB. Every table holds the same rows and types, findings.jsonl is the same bytes, the verdict the
    same, the report the same page but for the directory it names."""
    spark_out, _ = incident_run
    out = tmp_path / "out"
    result = run_analyze(
        None,
        [str(INCIDENT)],
        str(out),
        str(out / "report.html"),
        ParseOptions(),
        ReplayOptions(),
        top_findings=4,
    )
    assert result.exit_code == 1 and result.parse.reconciled
    mine, theirs = canonical(out), canonical(spark_out)
    for name in TABLES:
        assert mine["tables"][name] == theirs["tables"][name], name
    assert mine == theirs
    page = (out / "report.html").read_text("utf-8").replace(str(out), "DIR")
    assert page == (spark_out / "report.html").read_text("utf-8").replace(str(spark_out), "DIR")


@pytest.mark.spark
def test_a_users_report_of_a_small_dir_runs_without_spark_and_writes_sparks_page(incident_run, tmp_path):
    """``report DIR`` in a fresh process (where no JVM can start) chooses by DIR's tables (jobs/engine.py):
    the sample's DIR is built on DuckDB into the page Spark's analyze wrote, byte for byte."""
    out, _ = incident_run
    html = tmp_path / "report.html"
    done = without_a_jvm(["report", str(out), "--out", str(html)])
    assert done.returncode == 0, done.stderr[-3000:]
    assert "built in this process (it fits in memory)" in done.stdout
    assert html.read_bytes() == (out / "report.html").read_bytes()
