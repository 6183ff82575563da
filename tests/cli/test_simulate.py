"""``kafka-forensics simulate``: scenarios, scale mode, exit codes."""

from __future__ import annotations

import json

from click.testing import CliRunner

from kafka_forensics.cli.main import main


def test_scenario_writes_logs_truth_and_readme(tmp_path):
    r = CliRunner().invoke(
        main,
        ["simulate", "--scenario", "unclean-election", "--kafka-version", "2.8", "--seed", "3", "--out", str(tmp_path)],
    )
    assert r.exit_code == 0, r.output
    truth = json.loads((tmp_path / "truth.json").read_text())
    assert truth["kafka_version"] == "2.8.2" and truth["state_change_level"] == "INFO" and truth["seed"] == 3
    # the scenario's unclean election on events-0, and the lab's script on fragile-0 (both replicas
    # down, the out-of-ISR follower back first: lab/scenarios.py unclean-election)
    assert [(f["rule"], f["topic"]) for f in truth["findings"]] == [
        ("unclean_election", "events"),
        ("unclean_election", "fragile"),
    ]
    assert "truth: unclean_election events-0" in r.output and "truth: unclean_election fragile-0" in r.output
    assert (tmp_path / "README.md").read_text().startswith("# unclean-election (Kafka 2.8.2, zookeeper)")
    assert (tmp_path / "broker-1" / "state-change.log").is_file()


def test_trace_flag(tmp_path):
    r = CliRunner().invoke(
        main, ["simulate", "--scenario", "lifecycle", "--kafka-version", "2.8", "--trace", "--out", str(tmp_path)]
    )
    assert r.exit_code == 0, r.output
    text = (tmp_path / "broker-1" / "state-change.log").read_text()
    assert " TRACE [Controller id=1 epoch=1] Changed state of replica" in text


def test_scale_mode(tmp_path):
    r = CliRunner().invoke(
        main,
        [
            "simulate",
            "--scale",
            "--brokers",
            "5",
            "--topics",
            "3",
            "--partitions",
            "60",
            "--failovers",
            "2",
            "--out",
            str(tmp_path),
        ],
    )
    assert r.exit_code == 0, r.output
    assert "lines/s" in r.output
    truth = json.loads((tmp_path / "truth.json").read_text())
    assert truth["scenario"] == "scale" and truth["lines"] > 1000 and len(truth["brokers"]) == 5


def test_usage_errors_exit_2(tmp_path):
    runner = CliRunner()
    r = runner.invoke(main, ["simulate", "--scenario", "lifecycle", "--kafka-version", "2.5", "--out", str(tmp_path)])
    assert r.exit_code == 2 and "supported" in r.output
    r = runner.invoke(main, ["simulate", "--out", str(tmp_path)])
    assert r.exit_code == 2 and "--scenario" in r.output
    r = runner.invoke(main, ["simulate", "--scenario", "lifecycle", "--kafka-version", "3.9", "--out", str(tmp_path)])
    assert r.exit_code == 2 and "does not write Kafka 3.9 (ZooKeeper); supported:" in r.output
    r = runner.invoke(
        main,
        ["simulate", "--scenario", "zombie-controller", "--kafka-version", "3.9-kraft", "--out", str(tmp_path / "k")],
    )
    assert r.exit_code == 2 and "not defined for Kafka 3.9.0" in r.output
    r = runner.invoke(main, ["simulate", "--scale", "--brokers", "2", "--out", str(tmp_path / "s")])
    assert r.exit_code == 2
