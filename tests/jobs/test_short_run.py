"""Which runs get the short-run JVM and SQL settings (``jobs/spark_session.short_run``): small local inputs
of a session the command launches itself, never a session already running."""

from __future__ import annotations

import os
import threading

import pytest

from kafka_forensics.core.tables import EVENTS, REPLICA_TIMELINE
from kafka_forensics.jobs.spark_session import (
    SHORT_RUN_BYTES,
    SHORT_RUN_JAVA_OPTION,
    SHORT_RUN_TABLE_BYTES,
    build_session,
    session_settings,
    short_run,
    short_run_conf,
    short_run_tables,
)
from tests.support.paths import SAMPLES

SAMPLE = SAMPLES / "kafka-2.4-controller-failover"


def test_the_bundled_sample_is_a_short_run():
    assert short_run([str(SAMPLE)])
    assert short_run([str(next(SAMPLE.rglob("*.log")))])


def test_more_local_input_than_the_limit_is_not(tmp_path):
    big = tmp_path / "logs" / "server.log"
    big.parent.mkdir()
    with big.open("wb") as out:  # sparse: the size counts, no disk is used
        out.truncate(SHORT_RUN_BYTES + 1)
    assert not short_run([str(tmp_path / "logs")])
    assert not short_run([str(SAMPLE), str(big)])


def test_remote_or_missing_inputs_are_not(tmp_path):
    assert not short_run(["hdfs:///logs/kafka/"])
    assert not short_run([str(SAMPLE), "s3a://bucket/logs/"])
    assert not short_run([os.fspath(tmp_path / "missing")])


def _sparse(path, size: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:  # sparse: the size counts, no disk is used
        out.truncate(size)


def test_a_dir_is_small_while_its_tables_are_no_larger_than_a_short_runs(tmp_path):
    """What ``check --reuse`` and ``report`` read: the tables, not the report or Data Docs beside them."""
    out = tmp_path / "out"
    _sparse(out / EVENTS / "part-00000.parquet", SHORT_RUN_TABLE_BYTES // 2)
    _sparse(out / "report.html", 4 * SHORT_RUN_TABLE_BYTES)
    _sparse(out / "data_docs" / "index.html", SHORT_RUN_TABLE_BYTES)
    assert short_run_tables(str(out))
    _sparse(out / REPLICA_TIMELINE / "part-00000.parquet", SHORT_RUN_TABLE_BYTES // 2 + 1)  # together: one byte over
    assert not short_run_tables(str(out))


def test_a_missing_or_remote_dir(tmp_path):
    assert short_run_tables(str(tmp_path / "missing"))  # nothing to read: the command says which table is missing
    assert not short_run_tables("hdfs://nn/out")


def test_a_launch_for_a_short_run_gets_its_settings_and_the_users_own_win():
    settings = session_settings(None, {"spark.sql.shuffle.partitions": "16"}, [str(SAMPLE)])
    assert SHORT_RUN_JAVA_OPTION in settings["spark.driver.extraJavaOptions"]
    assert settings["spark.sql.adaptive.enabled"] == "false"
    assert settings["spark.sql.codegen.wholeStage"] == "false"
    assert settings["spark.sql.codegen.factoryMode"] == "NO_CODEGEN"
    assert settings["spark.sql.shuffle.partitions"] == "16"


def test_a_launch_for_a_long_or_remote_run_keeps_sparks_own_execution():
    for master, inputs in ((None, ["hdfs:///logs/kafka/"]), ("spark://cluster:7077", [str(SAMPLE)]), (None, None)):
        settings = session_settings(master, {}, inputs)
        assert SHORT_RUN_JAVA_OPTION not in settings["spark.driver.extraJavaOptions"]
        assert not (set(short_run_conf()) - {"spark.sql.shuffle.partitions"}) & set(settings)


def test_a_running_session_gets_no_short_run_settings_nor_driver_options():
    running = {"spark.master": "local[2]", "spark.sql.shuffle.partitions": "4"}
    settings = session_settings(None, {"spark.sql.session.timeZone": "UTC"}, [str(SAMPLE)], running)
    assert "spark.driver.extraJavaOptions" not in settings and "spark.master" not in settings
    assert not set(short_run_conf()) & set(settings)
    assert settings["spark.sql.session.timeZone"] == "UTC"


@pytest.mark.spark
def test_a_command_in_another_thread_leaves_the_running_sessions_settings_alone(spark):
    """``getActiveSession`` is per thread: a command run from a worker thread (a notebook, a
    scheduler) must still find the process's running session and keep its settings."""
    before = {key: spark.conf.get(key) for key in short_run_conf()}
    sessions = []
    worker = threading.Thread(target=lambda: sessions.append(build_session(inputs=[str(SAMPLE)])))
    worker.start()
    worker.join()
    assert sessions == [spark]
    assert {key: spark.conf.get(key) for key in short_run_conf()} == before
