"""Bad input at the job level (issue 14, items 12, 15, 16): the parse finishes, with a note or a
flag, and a real internal error is one sentence on stderr."""

from __future__ import annotations

import subprocess
import threading

import pytest

from kafka_forensics.jobs.discovery import discover
from kafka_forensics.jobs.parse_job import run_parse
from kafka_forensics.parsers.records import ParseOptions
from tests.support.cli import installed_cli
from tests.support.kafka_lines import BROKER_CHANGE_22, STATE_CHANGE_21, text

pytestmark = pytest.mark.spark

BAD_TS = BROKER_CHANGE_22.replace("2021-03-04 10:15:23,456", "2021-02-30 25:61:61,999")


def _within(seconds: float, action):
    """Run ``action`` in a thread; fail (instead of hanging the suite) if it does not return."""
    box: dict = {}

    def run():
        try:
            box["value"] = action()
        except BaseException as err:
            box["error"] = err

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive():
        pytest.fail(f"did not finish within {seconds} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


def test_an_impossible_timestamp_does_not_fail_the_job(spark, tmp_path):
    logs = tmp_path / "broker-9"
    logs.mkdir()
    (logs / "controller.log").write_bytes(text(BROKER_CHANGE_22, BAD_TS, BROKER_CHANGE_22))
    summary = run_parse(spark, [str(logs)], str(tmp_path / "out"), ParseOptions())
    assert summary.reconciled and summary.records == 3 and summary.quarantined == 0
    assert summary.ts_invalid == 1 and summary.files[0]["ts_invalid"] == 1
    bad = spark.read.parquet(str(tmp_path / "out" / "events")).filter("line_no = 2").first()
    assert bad.ts is None and bad.ts_raw == "2021-02-30 25:61:61,999"
    assert bad.attrs["ts_invalid"] == "not a calendar date and time"


def _stderr_lines(result: subprocess.CompletedProcess) -> list[str]:
    # The JVM itself announces the incubator module Spark 4 loads; that line is not Spark's log.
    return [
        ln for ln in result.stderr.splitlines() if ln.strip() and not ln.startswith("WARNING: Using incubator modules")
    ]


def test_cli_parse_of_a_file_with_an_impossible_timestamp_exits_0(tmp_path):
    (tmp_path / "controller.log").write_bytes(text(BROKER_CHANGE_22, BAD_TS))
    result = installed_cli(["parse", str(tmp_path / "controller.log"), "--out", str(tmp_path / "out")])
    assert result.returncode == 0, result.stderr[-3000:]
    assert _stderr_lines(result) == []
    assert "1 record(s) have a timestamp that is not a real instant" in result.stdout


def test_a_real_internal_error_is_one_sentence_on_stderr(tmp_path):
    (tmp_path / "state-change.log").write_bytes(text(STATE_CHANGE_21))
    # Python workers that cannot start: the Spark job fails for a reason no input line caused.
    result = installed_cli(
        ["parse", str(tmp_path), "--out", str(tmp_path / "out"), "--conf", "spark.kafka_forensics.engine=spark"],
        PYSPARK_PYTHON="/bin/false",
    )
    assert result.returncode == 3, result.stderr[-3000:]
    lines = _stderr_lines(result)
    assert len(lines) == 1 and lines[0].startswith("kafka-forensics: error: parse job failed: "), lines[:20]


def test_a_symbolic_link_loop_is_skipped_with_a_note(spark, tmp_path):
    logs = tmp_path / "logs"
    (logs / "broker-1").mkdir(parents=True)
    (logs / "broker-1" / "controller.log").write_bytes(text(BROKER_CHANGE_22))
    (logs / "broker-1" / "back-up").symlink_to("..")  # a loop: broker-1/back-up/broker-1/back-up/...
    (logs / "self").symlink_to(".")
    (logs / "gone.log").symlink_to("missing")  # a link that leads nowhere
    notes: list[str] = []
    files = _within(60, lambda: discover(spark, [str(logs)], notes))
    assert [f.display for f in files] == [str(logs / "broker-1" / "controller.log")]
    assert sorted(notes) == [
        f"skipped {logs / 'broker-1' / 'back-up'}: symbolic link loop (back to {logs})",
        f"skipped {logs / 'gone.log'}: cannot follow it (No such file or directory)",
        f"skipped {logs / 'self'}: symbolic link loop (back to {logs})",
    ]


def test_a_loop_inside_the_input_does_not_stop_the_parse(spark, tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "state-change.log").write_bytes(text(STATE_CHANGE_21))
    (logs / "again").symlink_to(logs)
    summary = _within(120, lambda: run_parse(spark, [str(logs)], str(tmp_path / "out"), ParseOptions()))
    assert summary.records == 1 and len(summary.files) == 1
    assert summary.notes == [f"skipped {logs / 'again'}: symbolic link loop (back to {logs})"]


def test_the_same_file_named_twice_is_read_once_with_a_note(spark, tmp_path):
    log = tmp_path / "state-change.log"
    log.write_bytes(text(STATE_CHANGE_21))
    (tmp_path / "alias.log").symlink_to(log)
    notes: list[str] = []
    files = discover(spark, [str(log), str(tmp_path / "*.log"), str(log), str(tmp_path / "alias.log")], notes)
    assert [f.display for f in files] == [str(log)]
    assert notes == [
        f"{tmp_path / '*.log'}: every file it names is already read",
        f"{log}: already read (named by an earlier input)",
        f"{tmp_path / 'alias.log'}: already read as {log} (the same file)",
    ]
    summary = run_parse(spark, [str(log), str(log)], str(tmp_path / "out"), ParseOptions())
    assert summary.records == 1 and summary.notes == [f"{log}: already read (named by an earlier input)"]
