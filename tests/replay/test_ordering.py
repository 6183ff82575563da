"""Replay order, version ranges and the cluster context (pure Python)."""

from __future__ import annotations

import datetime as dt

import pytest

from kafka_forensics.core.eras import range_for_dialect, range_for_line
from kafka_forensics.core.errors import UnknownKafkaVersionError
from kafka_forensics.replay.cluster import build_cluster_context
from kafka_forensics.replay.findings import Finding, finding_json
from kafka_forensics.replay.ordering import assign_epochs, replay_order
from tests.support.replay import ctrl, events_of


def _t(seconds: float) -> dt.datetime:
    return dt.datetime(2021, 3, 4, 10, 0, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=seconds)


def _ev(line_no: int, seconds: float, epoch=None, source="a.log") -> dict:
    return {"source_file": source, "line_no": line_no, "ts": _t(seconds), "controller_epoch": epoch}


def test_epoch_first_then_time_then_file_position():
    events = [_ev(1, 30, 5, "b1.log"), _ev(1, 10, 6, "b2.log"), _ev(2, 10, 6, "b2.log"), _ev(3, 5, 6, "a.log")]
    order = [(epoch, e["source_file"], e["line_no"]) for _, epoch, e in replay_order(events, lambda ts: None)]
    assert order == [(5, "b1.log", 1), (6, "a.log", 3), (6, "b2.log", 1), (6, "b2.log", 2)]


def test_lines_without_epoch_take_the_active_controller_or_their_neighbours():
    events = [_ev(1, 0), _ev(2, 1, 7), _ev(3, 2), _ev(4, 3, 8), _ev(5, 4)]
    assert assign_epochs(events, lambda ts: None) == [7, 7, 7, 8, 8]
    assert assign_epochs(events, lambda ts: 9 if ts >= _t(4) else None) == [7, 7, 7, 8, 9]
    assert assign_epochs([_ev(1, 0)], lambda ts: None) == [-1]


def test_generations_split_epochs_at_a_reset():
    events = [_ev(1, 100, 28), _ev(2, 10, 46)]
    ordered = replay_order(events, lambda ts: None, lambda ts: 1 if ts >= _t(50) else 0)
    assert [e["line_no"] for _, _, e in ordered] == [2, 1]


def test_dialect_ranges_are_lower_bounds():
    assert str(range_for_dialect("zk-1.0").first) == "1.0" and str(range_for_dialect("zk-1.0").last) == "3.9"
    assert str(range_for_dialect("zk-0.8").last) == "0.11.0"
    assert range_for_dialect("kraft").kraft
    assert range_for_line("zk-1.1", "2.2.0", None).label == "2.2.0"
    assert range_for_line("zk-1.1", "2.2.0", "3.9-kraft").kraft
    assert range_for_line("zk-1.1", "7.0.1-ccs", None).label == "3.0"  # Confluent Platform 7.0 ships Kafka 3.0
    assert range_for_line("zk-1.1", "2.9.1-vendor", None).label == "1.1 - 3.9"  # no such release: dialect decides
    assert range_for_line("kraft", "3.9.0", None).kraft
    with pytest.raises(UnknownKafkaVersionError):
        range_for_line("zk-1.1", None, "9.9")


def test_cluster_context_controllers_and_liveness():
    events = events_of(
        {
            "b1/controller.log": [
                ctrl(
                    "10:00:00,000",
                    "[Controller id=1] 1 successfully elected as the controller. Epoch incremented to 7 and "
                    "epoch zk version is now 6",
                ),
                ctrl("10:00:00,100", "[Controller id=1] Currently active brokers in the cluster: Set(1, 2, 3)"),
                ctrl(
                    "10:01:00,000",
                    "[Controller id=1] Newly added brokers: , deleted brokers: 3, bounced brokers: , "
                    "all live brokers: 1,2",
                ),
                ctrl("10:02:00,000", "[Controller id=1] Shutting down broker 2"),
                ctrl("10:03:00,000", "[Controller id=1] Resigned"),
            ]
        }
    )
    ctx = build_cluster_context("", sorted(events, key=lambda e: e["ts"]), [])
    [c] = ctx.controllers
    assert (c.controller_id, c.controller_epoch, c.elected) == (1, 7, True)
    assert c.ts_end == c.ts_start + dt.timedelta(minutes=3) and c.end_evidence == "b1/controller.log:5"
    assert (
        ctx.epoch_at(c.ts_start + dt.timedelta(seconds=1)) == 7 and ctx.epoch_at(c.ts_start - dt.timedelta(1)) is None
    )
    at = c.ts_start + dt.timedelta(seconds=90)
    assert (ctx.is_live(3, at), ctx.is_live(2, at), ctx.is_live(9, at)) == (False, True, False)
    assert ctx.is_live(2, c.ts_start + dt.timedelta(seconds=150)) is False  # shutting down: not live for elections
    assert ctx.broker_state_at(2, c.ts_start + dt.timedelta(seconds=150))[0] == "shutting_down"
    assert ctx.is_live(1, c.ts_start - dt.timedelta(seconds=1)) is None  # before any evidence: unknown
    assert [b.state for b in ctx.brokers if b.broker == 3] == ["alive", "dead"]


def test_finding_ids_hash_what_the_finding_is():
    a = Finding.make("state_gap", "warning", "x", ["f:1", "f:2", "f:1"], topic="t", partition=0)
    b = Finding.make("state_gap", "warning", "other words", ["f:1", "f:2"], topic="t", partition=0)
    assert a.evidence == ("f:1", "f:2") and a.finding_id == b.finding_id
    assert Finding.make("state_gap", "warning", "x", ["f:1"], topic="t", partition=1).finding_id != a.finding_id
    with pytest.raises(ValueError):
        Finding.make("no_such_rule", "warning", "x", ["f:1"])
    with pytest.raises(ValueError):
        Finding.make("state_gap", "warning", "x", [])
    row = a.to_row()
    assert finding_json(row) == row["json"] and row["json"].startswith('{"finding_id": ')
