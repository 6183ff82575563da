"""Simulator output: deterministic from the seed, hourly rotation named like log4j's
DailyRollingFileAppender, optional gzip of rolled files, shared files, skewed clocks, lost segments."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from kafka_forensics.core.errors import UsageError
from kafka_forensics.simulator.clock import DEFAULT_START, SimClock
from kafka_forensics.simulator.profile import PROFILES, profile_for
from kafka_forensics.simulator.scenarios import run_scenario
from kafka_forensics.simulator.writer import LogOutput
from tests.support.paths import SAMPLES
from tests.support.simulator import parse_dir, simulated

ROLLED = re.compile(r"^broker-\d/(state-change|controller|server)\.log\.2024-03-04-\d\d(\.gz)?$")


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(
    "scenario,version,gz",
    [("zombie-controller", "1.1", False), ("lifecycle", "2.8", True), ("unclean-election", "3.9-kraft", False)],
)
def test_same_seed_same_bytes(tmp_path, scenario, version, gz):
    a = run_scenario(scenario, version, tmp_path / "a", seed=11, gzip=gz)
    b = run_scenario(scenario, version, tmp_path / "b", seed=11, gzip=gz)
    assert a.files == b.files
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")


def test_another_seed_other_bytes(tmp_path):
    run_scenario("lifecycle", "2.4", tmp_path / "a", seed=1)
    run_scenario("lifecycle", "2.4", tmp_path / "b", seed=2)
    assert _tree(tmp_path / "a") != _tree(tmp_path / "b")


def test_hourly_rotation_and_gzip(tmp_path):
    res = run_scenario("lifecycle", "2.4", tmp_path, seed=3, gzip=True)
    rolled = [f for f in res.files if ROLLED.match(f)]
    current = [f for f in res.files if f.endswith(".log")]
    assert rolled and all(f.endswith(".gz") for f in rolled), res.files
    assert {f.rsplit("/", 1)[1] for f in current} == {"state-change.log", "controller.log", "server.log"}
    for f in rolled:
        gzip.decompress((tmp_path / f).read_bytes())  # a valid gzip stream
    parsed = parse_dir(tmp_path, res.files)
    assert all(r.summary["compressed"] for f, r in parsed.items() if f.endswith(".gz"))
    assert all(not r.quarantine for r in parsed.values())
    # The rolled file holds the earlier hour, the current file the later one.
    first = gzip.decompress((tmp_path / "broker-1/state-change.log.2024-03-04-10.gz").read_bytes()).decode()
    assert first.startswith("[2024-03-04 10:") and "[2024-03-04 11:" not in first
    assert (tmp_path / "broker-1/state-change.log").read_text().startswith("[2024-03-04 11:")


def test_gzip_is_deterministic(tmp_path):
    run_scenario("lifecycle", "1.1", tmp_path / "a", seed=5, gzip=True)
    run_scenario("lifecycle", "1.1", tmp_path / "b", seed=5, gzip=True)
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")


def test_evidence_points_at_the_right_lines():
    res = simulated("unclean-election", "2.4")
    [f] = [f for f in res.truth["findings"] if f["topic"] == "events"]
    path, line = f["evidence"][0].rsplit(":", 1)
    text = (res.out_dir / path).read_text().splitlines()[int(line) - 1]
    assert "Changed partition events-0 from OfflinePartition to OnlinePartition" in text
    assert "leader=2," in text and "isr=List(2)" in text


def test_shared_file_and_clock_skew():
    res = simulated("skew-and-shared-file", "2.4")
    truth = res.truth
    assert truth["clock_skew"] == [{"broker": 3, "skew_ms": 4200}]
    assert {s["file"] for s in truth["shared_files"]} == {"shared/state-change.log", "shared/server.log"}
    shared = (res.out_dir / "shared/state-change.log").read_text()
    assert "[Broker id=1]" in shared and "[Broker id=2]" in shared
    assert not (res.out_dir / "broker-1/state-change.log").exists()
    # Broker 3 prints 4.2 s ahead: its first line is later than broker 1's first line by about that much.
    b3 = (res.out_dir / "broker-3/server.log").read_text().splitlines()[0]
    b1 = (res.out_dir / "shared/server.log").read_text().splitlines()[0]
    assert b3[1:24] > b1[1:24]


def test_lost_segment_is_recorded():
    res = simulated("lost-segment", "2.8")
    [gap] = res.truth["deleted_lines"]
    assert gap["count"] == len(gap["lines"]) > 0
    assert all("from NewPartition to OnlinePartition" not in line or "orders" in line for line in gap["lines"])
    text = (res.out_dir / gap["file"]).read_text()
    assert not any(line in text for line in gap["lines"])
    assert {f["rule"] for f in res.truth["findings"]} == {"state_gap"}


def test_writer_rotation_unit(tmp_path):
    import random

    clock = SimClock(random.Random(0), DEFAULT_START)
    out = LogOutput(tmp_path, PROFILES["2.4"], clock)
    refs = []
    for minutes in (0, 30, 59, 60, 61, 125):
        clock.now = int(DEFAULT_START.timestamp() * 1000) + minutes * 60_000
        refs.append(out.sc(1, 2, f"[Broker id=1] line at +{minutes}m"))
    files = out.close()
    assert files == [
        "broker-1/state-change.log",
        "broker-1/state-change.log.2024-03-04-10",
        "broker-1/state-change.log.2024-03-04-11",
    ]
    assert [LogOutput.ref_text(r) for r in refs] == [
        "broker-1/state-change.log.2024-03-04-10:1",
        "broker-1/state-change.log.2024-03-04-10:2",
        "broker-1/state-change.log.2024-03-04-10:3",
        "broker-1/state-change.log.2024-03-04-11:1",
        "broker-1/state-change.log.2024-03-04-11:2",
        "broker-1/state-change.log:1",
    ]


@pytest.mark.parametrize(
    "text,tag",
    [
        ("2.4", "2.4.1"),
        ("2.4.0", "2.4.1"),
        ("0.10.2.1", "0.10.2.2"),
        ("3.9-kraft", "3.9.0"),
        ("3.9.0-kraft", "3.9.0"),
        ("2.8.1", "2.8.2"),
    ],
)
def test_versions(text, tag):
    assert profile_for(text).tag == tag


@pytest.mark.parametrize("text", ["2.5", "4.0", "3.6-kraft", "nonsense", "0.7", "3.9"])
def test_unsupported_versions(text):
    with pytest.raises(UsageError):
        profile_for(text)


_LOGGER = re.compile(r"^\[[^\]]+\] [A-Z]+ .* \(([\w.$]+)\)$")


def _server_loggers(files) -> set[str]:
    loggers = set()
    for path in files:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as fh:
            loggers |= {m.group(1) for m in map(_LOGGER.match, fh.read().splitlines()) if m}
    return loggers


def test_0_10_server_log_holds_kafka_loggers_only():
    """config/log4j.properties@0.10.2.2:16,64: only ``kafka.*`` reaches server.log, so neither
    AppInfoParser's version line nor ZkClient's session expiry is there - in the recorded real
    0.10.2.2 zombie as in the simulated one; from 1.1 the root logger writes server.log too."""
    real = _server_loggers((SAMPLES / "real-0.10-zk-zombie-controller").glob("broker-*/server.log*"))
    sim = simulated("zombie-controller", "0.10.2")
    simulated_loggers = _server_loggers(sim.out_dir.glob("broker-*/server.log*"))
    for loggers in (real, simulated_loggers):
        assert loggers and all(name.startswith("kafka.") for name in loggers), loggers
    newer = _server_loggers(simulated("zombie-controller", "1.1").out_dir.glob("broker-*/server.log*"))
    assert "org.apache.kafka.common.utils.AppInfoParser" in newer
