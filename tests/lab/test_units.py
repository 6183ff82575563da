"""The lab's own pieces, without a cluster: the regenerated stock log4j files, the describe parser on
the describe texts real Kafka printed, the truth rules, the cut of a log at the incident's end, and
Kafka's statements the truth relies on (matched on lines real brokers wrote)."""

from __future__ import annotations

import gzip
import json
import re
import subprocess

import pytest

from kafka_forensics.core.errors import UsageError
from kafka_forensics.lab import log4j
from kafka_forensics.lab.cluster import ephemerals
from kafka_forensics.lab.curate import cut_log, cut_metadata_dump
from kafka_forensics.lab.describe import parse_describe, partitions
from kafka_forensics.lab.oracle import _ELECTED, FAILED_PARTITION_CHANGE, STALE_EPOCH_REFUSAL
from kafka_forensics.lab.releases import RELEASES, resolve
from kafka_forensics.lab.truth import complete_must_not, expect, judge, rule_names
from tests.support.paths import REPO

MIRROR = REPO.parent / ".mirror" / "apache+kafka" / "repo"
INCIDENTS = sorted(p.parent for p in (REPO / "sample_logs").glob("real-*/truth.json"))


def _stock(tag: str, path: str) -> str:
    if not MIRROR.is_dir():
        pytest.skip(f"no Kafka source mirror at {MIRROR}")
    done = subprocess.run(["git", f"--git-dir={MIRROR}", "show", f"{tag}:{path}"], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"{path}@{tag} not in the mirror")
    return done.stdout


@pytest.mark.parametrize("line", [k for k, c in log4j.STOCK.items() if c.flavor == "log4j"])
def test_generated_log4j_is_the_stock_file_setting_by_setting(line):
    """Each setting the lab writes is the stock file's, on the line it cites."""
    cfg = log4j.STOCK[line]
    stock = {}
    for number, text in enumerate(_stock(cfg.tag, cfg.path).splitlines(), 1):
        text = text.strip()
        if text and not text.startswith("#"):
            key, _, value = text.partition("=")
            stock[key.strip()] = (value.strip(), number)
    generated = {key: (value, number) for key, value, number in log4j.properties_settings(cfg)}
    assert generated == stock


def test_rendered_properties_cite_every_setting():
    text = log4j.render(log4j.STOCK["3.9"])[1]
    settings = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    cites = [ln for ln in text.splitlines() if re.match(r"# config/log4j\.properties@3\.9\.0-rc3:\d+$", ln)]
    assert len(settings) == len(cites) == len(log4j.properties_settings(log4j.STOCK["3.9"]))
    assert "log4j.appender.stateChangeAppender.DatePattern='.'yyyy-MM-dd-HH" in settings
    assert "log4j.logger.state.change.logger=INFO, stateChangeAppender" in settings


def test_trace_variant_changes_only_the_state_change_logger():
    for cfg in log4j.STOCK.values():
        plain = set(log4j.properties_settings(cfg)) if cfg.flavor == "log4j" else set(log4j.render(cfg)[1].splitlines())
        traced_cfg = cfg.with_trace()
        traced = (
            set(log4j.properties_settings(traced_cfg))
            if cfg.flavor == "log4j"
            else set(log4j.render(traced_cfg)[1].splitlines())
        )
        assert traced_cfg.level_of(log4j.STATE_CHANGE_LOGGER) == "TRACE"
        assert len(plain - traced) <= 2  # the level line (and the header comment naming it)


def test_log4j2_yaml_keeps_the_stock_appenders_and_levels():
    name, text = log4j.render(log4j.STOCK["4.x"])
    assert name == "log4j2.yaml"
    for file in ("server.log", "state-change.log", "controller.log"):
        assert f'fileName: "${{sys:kafka.logs.dir}}/{file}"' in text
        assert f'filePattern: "${{sys:kafka.logs.dir}}/{file}.%d{{yyyy-MM-dd-HH}}"' in text
    assert 'value: "[%d] %p %m (%c)%n"' in text
    assert re.search(
        r'- name: "state.change.logger".*\n\s+level: INFO\n\s+additivity: false\n\s+AppenderRef:\n'
        r"\s+ref: StateChangeAppender",
        text,
    )


def test_release_lines_resolve():
    assert resolve("3.9").version == "3.9.1" and resolve("3.9").mode == "zookeeper"
    assert resolve("3.9.0", "kraft").version == "3.9.0"
    assert resolve("4.1").mode == "kraft"
    for bad in ("5.0", "3.9.x", "latest"):
        with pytest.raises(UsageError):
            resolve(bad)
    with pytest.raises(UsageError):
        resolve("2.4", "kraft")
    assert set(RELEASES) == {"0.10", "1.1", "2.4", "2.8", "3.9", "4.1"}


def test_zookeeper_dump_ephemerals():
    """The `dump` four-letter word's section the lab reads the controller from
    (DataTree.dumpEphemerals: a session line, then one tab-indented path per ephemeral)."""
    dump = (
        "SessionTracker dump:\nGlobal Sessions(2):\n0x100000a1b2c0000\t6000ms\n"
        "ephemeral nodes dump:\nSessions with Ephemerals (2):\n"
        "0x100000a1b2c0000:\n\t/controller\n\t/brokers/ids/2\n"
        "0x100000a1b2c0001:\n\t/brokers/ids/1\nConnections dump:\n"
    )
    assert ephemerals(dump) == {
        "0x100000a1b2c0000": ["/controller", "/brokers/ids/2"],
        "0x100000a1b2c0001": ["/brokers/ids/1"],
    }


@pytest.mark.parametrize("incident", INCIDENTS, ids=lambda p: p.name)
def test_describe_parser_on_what_kafka_printed(incident):
    truth = json.loads((incident / "truth.json").read_text())
    for snap in truth["describe"]:
        text = (incident / snap["file"]).read_text()
        parsed = parse_describe(text)
        assert parsed["topics"] == snap["topics"]
        topic_lines = [ln for ln in text.splitlines() if ln.startswith("Topic")]
        partition_lines = [ln for ln in text.splitlines() if ln.startswith("\t")]
        assert len(parsed["topics"]) == len(topic_lines)
        assert sum(1 for _ in partitions(parsed)) == len(partition_lines)
        for name, topic in parsed["topics"].items():
            assert topic["partition_count"] == len(topic["partitions"]), name
            for p in topic["partitions"].values():
                assert len(p["replicas"]) == topic["replication_factor"]
                assert p["leader"] is None or p["leader"] in p["replicas"]
                assert set(p["isr"]) <= set(p["replicas"])


def test_complete_must_not_and_judge():
    must = [expect("unclean_election", "t", 0, "test")]
    must_not = complete_must_not(must, [], [("t", 0), ("t", 1)], "test")
    rules = {e["rule"] for e in must_not if e["topic"] is None}
    assert rules == set(rule_names()) - {"unclean_election"}
    assert expect("unclean_election", "t", 1, "") | {"why": must_not[-1]["why"]} in must_not
    truth = {"must": must, "may": [expect("state_gap", None, None, "")], "must_not": must_not}
    found = {"rule": "unclean_election", "topic": "t", "partition": 0, "severity": "critical"}
    assert judge(truth, [found]) == {"missing": [], "violations": [], "recall": 1.0}
    wrong = {"rule": "unclean_election", "topic": "t", "partition": 1, "severity": "critical"}
    verdict = judge(truth, [wrong])
    assert verdict["recall"] == 0.0 and len(verdict["violations"]) == 1
    note = {"rule": "empty_isr", "topic": "t", "partition": 0, "severity": "info"}
    allowed = {"rule": "state_gap", "topic": "t", "partition": 0, "severity": "warning"}
    assert judge(truth, [found, note, allowed])["violations"] == []


def test_cut_log_keeps_continuations_and_stops_at_the_end():
    lines = [
        "[2024-03-04 10:00:00,000] INFO a (x)",
        "[2024-03-04 10:00:01,000] ERROR b (x)",
        "java.lang.Exception: boom",
        "\tat a.b(C.java:1)",
        "[2024-03-04 10:00:02,001] INFO c (x)",
        "[2024-03-04 10:00:01,500] INFO d (x)",
    ]
    end = 1709546401999  # 2024-03-04 10:00:01.999 UTC
    assert cut_log(lines, end) == lines[:4]


def test_cut_metadata_dump_at_the_first_later_batch():
    text = (
        "Dumping /d/00000000000000000000.log\nLog starting offset: 0\n"
        "baseOffset: 0 lastOffset: 0 count: 1 position: 0 CreateTime: 1000 size: 80\n"
        "| offset: 0 CreateTime: 1000 a\n"
        "baseOffset: 1 lastOffset: 1 count: 1 position: 80 CreateTime: 3000 size: 80\n"
        "| offset: 1 CreateTime: 3000 b\n"
    )
    assert cut_metadata_dump(text, 2000).splitlines()[-1] == "| offset: 0 CreateTime: 1000 a"


def _lines_matching(pattern: re.Pattern) -> list[str]:
    out = []
    for incident in INCIDENTS:
        for path in incident.glob("broker-*/*.log*"):
            data = path.read_bytes()
            text = (gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode("utf-8", "replace")
            out += [ln for ln in text.splitlines() if pattern.search(ln)]
    return out


def test_kafka_statements_the_truth_relies_on():
    """The oracle's patterns on Kafka's own lines (ReplicaManager / KafkaController / PartitionStateMachine)."""
    assert re.search(
        STALE_EPOCH_REFUSAL,
        "[2026-11-25 17:54:22,722] WARN [Broker id=2] Received update metadata "
        "request with correlation id 4 from an old controller 1 with epoch 1. Latest known controller "
        "epoch is 2 (state.change.logger)",
    )
    m = _ELECTED.search(
        "[2026-11-25 17:54:18,862] INFO [Controller id=3] 3 successfully elected as the controller. "
        "Epoch incremented to 2 and epoch zk version is now 2 (kafka.controller.KafkaController)"
    )
    assert m and (m.group(1), m.group(2)) == ("3", "2")
    m = _ELECTED.search(
        "[2017-01-01 10:00:00,000] INFO [Controller 2]: Controller 2 incremented epoch to 5 "
        "(kafka.controller.KafkaController)"
    )
    assert m and (m.group(3), m.group(4)) == ("2", "5")
    m = FAILED_PARTITION_CHANGE.search(
        "ERROR [Controller id=3 epoch=1] Controller 3 epoch 1 failed to change state "
        "for partition fragile-0 from OfflinePartition to OnlinePartition"
    )
    assert m and (m.group(3), m.group(4)) == ("fragile", "0")
    m = FAILED_PARTITION_CHANGE.search(
        "ERROR Controller 3 epoch 1 initiated state change for partition [fragile,0] "
        "from OfflinePartition to OnlinePartition failed (state.change.logger)"
    )
    assert m and (m.group(1), m.group(2)) == ("fragile", "0")
    assert _lines_matching(_ELECTED), "no recorded incident has a controller election line"
