"""The parse command's exit codes and messages (no traceback without --debug)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from kafka_forensics.cli.main import main
from tests.support.kafka_lines import STATE_CHANGE_21, text


def test_unknown_kafka_version_exits_2_before_spark_starts(tmp_path):
    result = CliRunner().invoke(main, ["parse", str(tmp_path), "--out", str(tmp_path / "o"), "--kafka-version", "9.9"])
    assert result.exit_code == 2
    assert "Kafka 9.9 is not a known release" in result.output and "Traceback" not in result.output


def test_bad_layout_exits_2(tmp_path):
    result = CliRunner().invoke(main, ["parse", str(tmp_path), "--out", str(tmp_path / "o"), "--layout", "%d %p"])
    assert result.exit_code == 2 and "has no %m" in result.output


@pytest.mark.spark
def test_missing_path_exits_2_with_one_sentence(spark, tmp_path):
    result = CliRunner().invoke(main, ["parse", str(tmp_path / "missing"), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "input not found" in result.output and "Traceback" not in result.output


@pytest.mark.spark
def test_parse_prints_the_reconciliation(spark, tmp_path):
    (tmp_path / "state-change.log").write_bytes(text(STATE_CHANGE_21))
    result = CliRunner().invoke(main, ["parse", str(tmp_path / "state-change.log"), "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    assert "lines read 1 = records 1 + continuation lines 0 + quarantined 0" in result.output
    assert "partition_state_change" in result.output
