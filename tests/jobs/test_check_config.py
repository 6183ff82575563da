"""The check configuration: bundled defaults, a partial user file merged over them, clear errors."""

from __future__ import annotations

import pytest

from kafka_forensics.core.errors import UsageError
from kafka_forensics.expectations.suites import SUITES
from kafka_forensics.jobs.check_job import load_check_config


def test_defaults_come_from_the_bundled_file():
    config = load_check_config(None)
    assert config.suites == SUITES
    assert config.max_quarantine_rate == 0.01 and config.clock_skew_seconds == 2.0
    assert config.fail_on == ("critical",)
    assert config.severity == {
        "expect_isr_to_be_within_replicas": "warning",
        "expect_no_partition_unavailable_longer_than": "warning",
        "expect_no_partition_under_min_isr_longer_than": "warning",
    }
    assert config.max_unavailable_seconds == 60.0 and config.max_under_min_isr_seconds == 60.0
    assert config.source == "default"


def test_a_partial_file_overrides_only_its_keys(tmp_path):
    path = tmp_path / "check.toml"
    path.write_text(
        'suites = ["failover"]\n[thresholds]\nmax_quarantine_rate = 0.2\n'
        '[severity]\nexpect_no_stale_epoch_rejections = "warning"\n'
    )
    config = load_check_config(str(path))
    assert config.suites == ("failover",)
    assert config.max_quarantine_rate == 0.2 and config.clock_skew_seconds == 2.0
    assert config.severity == {
        "expect_isr_to_be_within_replicas": "warning",
        "expect_no_partition_unavailable_longer_than": "warning",
        "expect_no_partition_under_min_isr_longer_than": "warning",
        "expect_no_stale_epoch_rejections": "warning",
    }
    assert config.source == str(path)


@pytest.mark.parametrize(
    "text, message",
    [
        ("suites = [", "not valid TOML"),
        ('suites = ["events", "latency"]', "unknown suite 'latency'"),
        ("[thresholds]\nmax_quarantine_rte = 0.1", "unknown key thresholds.max_quarantine_rte"),
        ("[thresholds]\nmax_quarantine_rate = 2", "at most 1"),
        ('[verdict]\nfail_on = ["fatal"]', "verdict.fail_on"),
        ('[severity]\nexpect_world_peace = "info"', "names no expectation"),
        ('[severity]\nexpect_leader_to_be_in_isr = "loud"', "must be one of"),
        ("color = 1", "unknown key 'color'"),
        ("[thresholds]\nmax_unavailable_seconds = -5", "max_unavailable_seconds must be a non-negative number"),
    ],
)
def test_unusable_files_are_usage_errors(tmp_path, text, message):
    path = tmp_path / "check.toml"
    path.write_text(text)
    with pytest.raises(UsageError, match=message) as info:
        load_check_config(str(path))
    assert info.value.exit_code == 2


def test_the_impact_bounds_are_set_in_the_file(tmp_path):
    path = tmp_path / "check.toml"
    path.write_text(
        '[thresholds]\nmax_unavailable_seconds = 30\n[severity]\nexpect_no_partition_unavailable_longer_than = "critical"\n'
    )
    config = load_check_config(str(path))
    assert config.max_unavailable_seconds == 30.0 and config.max_under_min_isr_seconds == 60.0
    assert config.severity["expect_no_partition_unavailable_longer_than"] == "critical"
    assert "impact" in config.suites


def test_a_missing_file_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="cannot read"):
        load_check_config(str(tmp_path / "nope.toml"))
