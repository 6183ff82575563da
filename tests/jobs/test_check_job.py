"""``kafka-forensics check`` end to end on the bundled scenarios, on the shared Spark session.

One check per scenario (module-scoped): the zombie-controller simulation must fail exactly the
two failover expectations its truth names, the clean failover must pass, and errors must exit 2
with a verdict.json that says why.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kafka_forensics.cli.main import main
from kafka_forensics.core.errors import InputError
from kafka_forensics.jobs import spark_session
from kafka_forensics.jobs.check_job import load_check_config, run_check
from tests.support import check_diff
from tests.support.check_diff import assert_same_check, copy_replay_output, duckdb_check_of
from tests.support.cli import without_a_jvm
from tests.support.outputs import canonical
from tests.support.paths import REPO

SAMPLES = REPO / "sample_logs"
WIDE = {"COLUMNS": "250"}
pytestmark = pytest.mark.spark


def check(*args: str):
    return CliRunner().invoke(main, ["check", *args], env=WIDE)


def verdict_of(out: Path) -> dict:
    return json.loads((out / "verdict.json").read_text("utf-8"))


@pytest.fixture(scope="module")
def zombie(spark, tmp_path_factory):
    out = tmp_path_factory.mktemp("check") / "zombie"
    result = check(str(SAMPLES / "sim-2.8-zombie-controller"), "--out", str(out))
    return result, out


@pytest.fixture(scope="module")
def clean(spark, tmp_path_factory):
    out = tmp_path_factory.mktemp("check") / "clean"
    result = check(str(SAMPLES / "sim-2.4-clean-failover"), "--out", str(out))
    return result, out


def test_zombie_controller_fails_exactly_the_failover_expectations_its_truth_names(zombie):
    result, out = zombie
    assert result.exit_code == 1, result.output
    verdict = verdict_of(out)
    assert verdict["passed"] is False and verdict["exit_code"] == 1 and verdict["error"] is None
    # truth.json: concurrent_controllers + stale_epoch_rejected
    assert verdict["failed_expectations"] == [
        "failover.expect_no_concurrent_controllers",
        "failover.expect_no_stale_epoch_rejections",
    ]
    assert verdict["suites"]["events"]["success"] and verdict["suites"]["timelines"]["success"]
    failover = verdict["suites"]["failover"]["expectations"]
    assert failover["expect_no_concurrent_controllers"]["rule"] == "concurrent_controllers"
    # one episode: controller 1's stale epoch 1, its UpdateMetadata refused by brokers 2 and 3 (counted in the detail)
    stale = failover["expect_no_stale_epoch_rejections"]
    assert stale["unexpected_count"] == 1 and "2 refused request(s)" in stale["samples"][0]["detail"]
    assert verdict["counts"]["events"] == 207
    assert verdict["findings_by_rule"]["concurrent_controllers"] == {"error": 1}
    assert verdict["inputs"]["replay"] == "computed"
    assert "FAILED" in result.output and "expect_no_concurrent_controllers" in result.output


@pytest.mark.parametrize("scenario", ["zombie", "clean"])
def test_the_check_without_spark_writes_what_sparks_check_wrote(scenario, request, tmp_path):
    _, out = request.getfixturevalue(scenario)
    verdict = assert_same_check(out, duckdb_check_of(out, tmp_path / "duckdb"))
    assert verdict["passed"] is (scenario == "clean")


def test_a_users_check_of_small_inputs_runs_without_spark_and_writes_what_spark_wrote(zombie, tmp_path):
    """``check INPUTS`` in a fresh process (where no JVM can start) parses, replays and checks in the driver
    (jobs/engine.py) and leaves what the Spark check left: every table, findings.jsonl, the verdict, every
    GX result."""
    _, spark_out = zombie
    out = tmp_path / "out"
    done = without_a_jvm(["check", str(SAMPLES / "sim-2.8-zombie-controller"), "--out", str(out)])
    assert done.returncode == 1, done.stderr[-3000:]
    assert "checked in this process (it fits in memory)" in done.stdout
    assert canonical(out) == canonical(spark_out)
    assert assert_same_check(spark_out, out)["inputs"]["replay"] == "computed"


def test_check_reuse_of_a_small_dir_chooses_the_driver(zombie, tmp_path, monkeypatch):
    """``check --reuse --out DIR`` chooses by DIR's tables (``engine.choose_dir_engine``): as in a fresh process
    (no JVM running yet), a short run's DIR is checked without Spark, with Spark's results."""
    monkeypatch.setattr(spark_session, "driver_jvm_running", lambda: False)
    monkeypatch.delenv("KAFKA_FORENSICS_MASTER", raising=False)
    _, spark_out = zombie
    out = copy_replay_output(spark_out, tmp_path / "out")
    result = check("--reuse", "--out", str(out))
    assert result.exit_code == 1, result.output
    assert "checked in this process (it fits in memory)" in result.output and "starting Spark" not in result.output
    mine, spark_verdict = check_diff.verdict(out), check_diff.verdict(spark_out)
    assert mine.pop("inputs")["replay"] == "reused" and spark_verdict.pop("inputs")["replay"] == "computed"
    assert mine == spark_verdict
    assert check_diff.validation(out) == check_diff.validation(spark_out)


def test_offending_rows_cite_log_lines_that_say_so(zombie):
    _, out = zombie
    failover = verdict_of(out)["suites"]["failover"]["expectations"]
    samples = [row for e in failover.values() for row in e.get("samples", [])]
    assert len(samples) == 2  # one row per episode: the zombie's actions, the refusals of its epoch
    for row in samples:
        path, line = row["evidence"].rsplit(":", 1)
        text = Path(path).read_text("utf-8").splitlines()[int(line) - 1]
        assert "epoch" in text.lower() or "error_code=11" in text or "11)" in text, text
        assert row["ts"].startswith("2024-03-04T") and row["detail"]


def test_results_data_docs_and_thresholds_are_written(zombie):
    _, out = zombie
    for suite in ("events", "timelines", "failover"):
        result = json.loads((out / "validation" / f"{suite}.json").read_text("utf-8"))
        assert result["suite_name"] == suite and "results" in result
    index = (out / "data_docs" / "index.html").read_text("utf-8")
    assert "failover" in index
    page = next((out / "data_docs" / "expectations").glob("failover.html")).read_text("utf-8")
    assert "No concurrent controllers" in page
    verdict = verdict_of(out)
    assert verdict["thresholds"]["max_quarantine_rate"] == 0.01 and verdict["thresholds"]["fail_on"] == ["critical"]
    assert set(verdict["versions"]) >= {"great-expectations", "pyspark", "kafka-forensics", "python"}


def test_a_second_check_reuses_the_replay_and_runs_the_configured_suites(zombie, tmp_path):
    _, out = zombie
    config = tmp_path / "check.toml"
    config.write_text('suites = ["failover"]\n[severity]\nexpect_no_stale_epoch_rejections = "warning"\n')
    result = check(str(SAMPLES / "sim-2.8-zombie-controller"), "--out", str(out), "--config", str(config))
    assert result.exit_code == 1, result.output
    assert "using the replay tables" in result.output
    verdict = verdict_of(out)
    assert list(verdict["suites"]) == ["failover"]
    assert verdict["inputs"]["replay"] == "reused"
    assert verdict["failed_expectations"] == ["failover.expect_no_concurrent_controllers"]
    assert verdict["warnings"] == ["failover.expect_no_stale_epoch_rejections"]


def test_clean_failover_passes(clean):
    result, out = clean
    assert result.exit_code == 0, result.output
    verdict = verdict_of(out)
    assert verdict["passed"] is True and verdict["exit_code"] == 0
    assert verdict["failed_expectations"] == [] and verdict["warnings"] == []
    assert all(s["success"] for s in verdict["suites"].values())
    assert verdict["findings_by_rule"] == {}


def test_missing_input_exits_2_and_still_writes_a_verdict(spark, tmp_path):
    out = tmp_path / "out"
    result = check(str(tmp_path / "no-such-logs"), "--out", str(out))
    assert result.exit_code == 2, result.output
    assert "input not found" in result.output
    verdict = verdict_of(out)
    assert verdict["passed"] is False and verdict["exit_code"] == 2 and "input not found" in verdict["error"]


def test_bad_config_exits_2_and_still_writes_a_verdict(tmp_path):
    config = tmp_path / "check.toml"
    config.write_text('suites = ["events", "latency"]\n')
    out = tmp_path / "out"
    result = check(str(SAMPLES / "sim-2.4-clean-failover"), "--out", str(out), "--config", str(config))
    assert result.exit_code == 2, result.output
    assert "unknown suite 'latency'" in result.output
    assert verdict_of(out)["exit_code"] == 2


def test_run_check_without_replay_tables_is_an_input_error_with_a_verdict(spark, tmp_path):
    with pytest.raises(InputError, match="no complete replay output"):
        run_check(spark, str(tmp_path), load_check_config(None))
    verdict = verdict_of(tmp_path)
    assert verdict["exit_code"] == 2 and "replay" in verdict["error"]


def test_a_frame_read_a_batch_at_a_time_holds_what_the_whole_tables_conversion_holds(zombie, tmp_path, monkeypatch):
    """``stored_tables.local_frame``, the check's pandas frames: the zombie run's events split into files of 40
    lines, so that a column is null in every line of one file and not of another (pandas gives the two parts
    different dtypes), read batch by batch (as a table too large to hold, ``IN_MEMORY_BYTES``) equal pyarrow's
    conversion of the whole table; a frame of some columns holds their values and the table's other columns by
    name only, with its row count."""
    import pandas as pd
    import pyarrow.parquet as pq

    from kafka_forensics.core.tables import EVENTS
    from kafka_forensics.jobs import stored_tables
    from kafka_forensics.jobs.stored_tables import local_arrow, local_frame, local_rows

    _, out = zombie
    whole = local_arrow(str(out), EVENTS)  # small: in memory
    (tmp_path / EVENTS).mkdir()
    for n, start in enumerate(range(0, whole.num_rows, 40)):
        pq.write_table(whole.slice(start, 40), tmp_path / EVENTS / f"part-{n:05d}.parquet")
    monkeypatch.setattr(stored_tables, "IN_MEMORY_BYTES", 0)
    dataset = local_arrow(str(tmp_path), EVENTS)
    assert not isinstance(dataset, type(whole)) and local_rows(dataset) == local_rows(whole)
    parts = [pq.read_table(p).to_pandas() for p in sorted((tmp_path / EVENTS).iterdir())]
    assert any(len({str(p[c].dtype) for p in parts}) > 1 for c in whole.column_names)

    some_columns = ["source_file", "line_no", "level"]
    for source in (dataset, whole):
        pd.testing.assert_frame_equal(local_frame(source), whole.to_pandas(), check_exact=True)
        some = local_frame(source, set(some_columns))
        assert list(some.columns) == whole.column_names and len(some) == whole.num_rows
        pd.testing.assert_frame_equal(some[some_columns], whole.select(some_columns).to_pandas())
        assert some["message"].isna().all() and some["message"].array.nbytes == 0
