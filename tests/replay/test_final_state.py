"""The final-state oracle (replay/final_state.py) on the lab's recordings: ``kafka-topics --describe`` text that
real Kafka printed while the logs were written (sample_logs/real-*/describe/*.txt, taken at truth.json's
``at_ms``), parsed by the one describe parser (parsers/describe_output.py).

Taken with complete logs, a snapshot must agree with the replay: no finding. The same text with one thing
changed (what an operator would see if lines were missing, or the logs were cut) must give the one finding
that says which side is missing what, citing the snapshot's line.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from kafka_forensics.parsers.describe_output import parse_describe
from kafka_forensics.replay.final_state import DESCRIBE_LAG_SECONDS, SnapshotAt, compare_snapshot, snapshot_inputs
from kafka_forensics.replay.findings import INFO, WARNING
from tests.lab.test_incidents import known_gap
from tests.support.recorded import recorded_incidents, replayed

INCIDENTS = recorded_incidents()
LAG = dt.timedelta(seconds=DESCRIBE_LAG_SECONDS)
SKEW = dt.timedelta(seconds=2)  # --clock-skew's default


def oracle(path: Path, text: str, name: str, at: dt.datetime):
    r = replayed(path)
    s = SnapshotAt(parse_describe(text, name), at, "--describe-at")
    rows, alive, others, totals = snapshot_inputs(r.replay.partition_intervals, s, LAG, SKEW)
    ctx = r.replay.contexts.get("")
    return compare_snapshot(
        s, rows, alive, others.get("", []), totals.get("", 0), ctx.controller_at(at) if ctx else None, LAG, SKEW
    )


def _snapshots(path: Path):
    r = replayed(path)
    for snap in r.truth["describe"]:
        yield snap["file"], (path / snap["file"]).read_text(), r.at(snap["at_ms"])


def _params():
    out = []
    for p in INCIDENTS:
        reason = known_gap(p.name, "final_state")  # the lab's one table of known gaps
        marks = (pytest.mark.xfail(strict=True, reason=reason),) if reason else ()
        out.append(pytest.param(p, id=p.name, marks=marks))
    return out


@pytest.mark.parametrize("path", _params())
def test_every_recorded_snapshot_agrees_with_the_replay(path):
    found = [
        (name, f.severity, f.kind, f.summary)
        for name, text, at in _snapshots(path)
        for f in oracle(path, text, name, at)
    ]
    assert found == []


def _end(name: str):
    path = next(p for p in INCIDENTS if p.name == name)
    file, text, at = list(_snapshots(path))[-1]
    return path, file, text, at


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), start=1) if needle in line)


def test_a_leader_the_logs_do_not_show_is_a_warning_citing_the_snapshot_line():
    path, file, text, at = _end("real-3.9-zk-controller-kill")
    line = next(ln for ln in text.splitlines() if "Partition: 1\t" in ln)
    leader = int(line.split("Leader: ")[1].split("\t")[0])
    other = next(b for b in (1, 2, 3) if b != leader)
    changed = text.replace(line, line.replace(f"Leader: {leader}\t", f"Leader: {other}\t"))
    (f,) = oracle(path, changed, file, at)
    assert (f.rule, f.severity, f.kind, f.topic, f.partition) == (
        "final_state_mismatch",
        WARNING,
        "state_differs",
        "events",
        1,
    )
    assert f"leader {leader} vs {other}" in f.summary and "something changed that the logs do not show" in f.summary
    assert f.evidence[0] == f"{file}:{_line_of(changed, 'Partition: 1' + chr(9))}"
    causes = {
        r["cause"] for r in replayed(path).replay.partition_intervals if (r["topic"], r["partition"]) == ("events", 1)
    }
    assert f.evidence[1] in causes  # the line that set the logs' state


def test_a_partition_the_snapshot_lacks_and_a_topic_the_logs_lack():
    path, file, text, at = _end("real-3.9-zk-controller-kill")
    lines = text.splitlines()
    dropped = next(ln for ln in lines if "Partition: 2\t" in ln)
    extra = "Topic: ghost\tTopicId: 8Zx1q2w3Q4e5r6t7y8u9iA\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: "
    changed = "\n".join(
        [ln for ln in lines if ln != dropped] + [extra, "\tTopic: ghost\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1"]
    )
    found = {(f.kind, f.severity, f.topic, f.partition) for f in oracle(path, changed, file, at)}
    assert found == {
        ("missing_from_snapshot", WARNING, "events", 2),  # the logs show it alive: deleted without a line?
        ("absent_from_logs", INFO, "ghost", None),  # the logs never mention it: they are incomplete
    }


def test_a_snapshot_before_the_logs_begin_says_the_logs_are_incomplete():
    path, file, text, _ = _end("real-3.9-zk-controller-kill")
    before = replayed(path).replay.partition_intervals[0]["ts_start"] - dt.timedelta(hours=1)
    found = oracle(path, text, file, before)
    assert found and {(f.kind, f.severity) for f in found} == {("absent_from_logs", INFO)}
    assert all("the logs say nothing about it until then" in f.summary for f in found)


def test_the_quorum_status_against_the_controller_the_logs_show():
    path = next(p for p in INCIDENTS if p.name == "real-3.9-kraft-controller-kill")
    r = replayed(path)
    file, text, at = list(_snapshots(path))[-1]
    ctrl = r.replay.contexts[""].controller_at(at)
    # kafka-metadata-quorum describe --status (T:tools/MetadataQuorumCommand.java@3.9.0-rc3:266-275)
    status = "ClusterId:              Xk9r0b2mQ3qj1c0Z1c2d3w\nLeaderId:               {}\nLeaderEpoch:            {}\n"
    assert oracle(path, text + status.format(ctrl.controller_id, ctrl.controller_epoch), file, at) == []
    wrong = oracle(path, text + status.format(ctrl.controller_id, ctrl.controller_epoch + 1), file, at)
    assert [(f.kind, f.severity) for f in wrong] == [("controller_differs", WARNING)]
    assert wrong[0].evidence[0] == f"{file}:{len(text.splitlines()) + 2}"
