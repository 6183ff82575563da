"""Which runs get the short-run JVM (C1 only, ``jobs/spark_session.short_run``): small local inputs only."""

from __future__ import annotations

import os

from kafka_forensics.jobs.spark_session import SHORT_RUN_BYTES, short_run
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
