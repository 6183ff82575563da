"""The spark-submit entry point and a session that keeps what spark-submit configured."""

from __future__ import annotations

import pytest

from kafka_forensics.cli import spark_submit
from kafka_forensics.jobs.spark_session import build_session, driver_jvm_running


def test_a_driver_started_by_spark_submit_is_recognised(monkeypatch):
    monkeypatch.setenv("PYSPARK_GATEWAY_PORT", "40123")
    assert driver_jvm_running()


def test_the_entry_runs_the_command_line_with_its_arguments(capsys):
    with pytest.raises(SystemExit) as done:
        spark_submit.run(["merge", "--help"])
    assert done.value.code == 0
    assert "kafka-forensics merge" in capsys.readouterr().out


def test_the_entry_reports_usage_errors_with_exit_2(capsys):
    with pytest.raises(SystemExit) as done:
        spark_submit.run(["merge", "--kafka-compat", "x.log", "--partitions", "1"])
    assert done.value.code == 2
    assert "--partitions needs --topic" in capsys.readouterr().err


@pytest.mark.spark
def test_a_running_session_keeps_its_master_and_settings(spark):
    """As under spark-submit: no local[*], no laptop shuffle width forced over the running session's."""
    session = build_session(None, {"spark.sql.session.timeZone": "UTC"})
    assert session is spark
    assert session.sparkContext.master == "local[2]"
    assert session.conf.get("spark.sql.shuffle.partitions") == "4"
