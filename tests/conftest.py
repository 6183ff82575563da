"""Shared fixtures: one local Spark session for the whole run, and the shared corpus location."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.paths import REAL_LOGS


@pytest.fixture(scope="session")
def spark():
    from kafka_forensics.jobs.spark_session import build_session

    session = build_session("local[2]", {"spark.sql.shuffle.partitions": "4"})
    yield session
    session.stop()


@pytest.fixture(scope="session")
def real_log_files() -> list[Path]:
    files = sorted(REAL_LOGS.glob("*.log"))
    if not files:
        pytest.fail(f"the shared real-log corpus is missing: {REAL_LOGS}")
    return files
