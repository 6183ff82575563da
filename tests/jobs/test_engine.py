"""Which engine a command runs on (jobs/engine.py): the driver for a short local run this command launches
Spark for, Spark for everything else, and what ``--conf spark.kafka_forensics.engine`` asks for."""

from __future__ import annotations

import pytest

from kafka_forensics.core.errors import UsageError
from kafka_forensics.jobs import engine, spark_session
from kafka_forensics.jobs.engine import DRIVER, ENGINE_CONF, SPARK, choose_engine
from tests.support.paths import SAMPLES

SAMPLE = str(SAMPLES / "kafka-2.4-controller-failover")


@pytest.fixture
def no_jvm(monkeypatch):
    """As in a fresh command: no JVM is running in this process yet."""
    monkeypatch.setattr(spark_session, "driver_jvm_running", lambda: False)
    monkeypatch.delenv("KAFKA_FORENSICS_MASTER", raising=False)


def test_a_short_local_run_goes_to_the_driver(no_jvm, tmp_path):
    assert choose_engine([SAMPLE], str(tmp_path / "out"), None, {}) == DRIVER
    assert choose_engine([SAMPLE], str(tmp_path / "out"), "local[2]", {}) == DRIVER


@pytest.mark.parametrize(
    "inputs, out, master, why",
    [
        ([SAMPLE], "hdfs://nn/out", None, "a DIR on another filesystem"),
        ([SAMPLE + "/*"], "OUT", None, "a glob: Hadoop's listing"),
        (["s3a://bucket/logs"], "OUT", None, "a remote input"),
        ([SAMPLE], "OUT", "spark://master:7077", "a cluster"),
    ],
)
def test_anything_else_goes_to_spark(no_jvm, tmp_path, inputs, out, master, why):
    out = out if "://" in out else str(tmp_path / out)
    assert choose_engine(inputs, out, master, {}) == SPARK, why


def test_more_than_a_short_runs_bytes_goes_to_spark(no_jvm, tmp_path, monkeypatch):
    monkeypatch.setattr(spark_session, "SHORT_RUN_BYTES", 1000)
    assert choose_engine([SAMPLE], str(tmp_path / "out"), None, {}) == SPARK


def test_a_running_jvm_keeps_spark(monkeypatch, tmp_path):
    """spark-submit, a notebook's session: the user chose Spark."""
    monkeypatch.setattr(spark_session, "driver_jvm_running", lambda: True)
    assert choose_engine([SAMPLE], str(tmp_path / "out"), None, {}) == SPARK


def test_the_conf_overrides_the_choice(no_jvm, tmp_path):
    assert choose_engine([SAMPLE], str(tmp_path / "out"), None, {ENGINE_CONF: "spark"}) == SPARK
    assert choose_engine([SAMPLE], str(tmp_path / "out"), "spark://m:7077", {ENGINE_CONF: "Driver "}) == DRIVER
    with pytest.raises(UsageError, match="local files and paths only"):
        choose_engine([SAMPLE + "/*"], str(tmp_path / "out"), None, {ENGINE_CONF: "driver"})
    with pytest.raises(UsageError, match="must be auto, spark or driver"):
        engine.engine_choice({ENGINE_CONF: "duckdb"})
