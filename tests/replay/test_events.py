"""The event contract (replay/events.py): what every producer hands the replay, on real lines (a recorded
incident parsed by ``parse_file``), converted a batch at a time and row by row."""

from __future__ import annotations

from kafka_forensics.parsers.records import parse_file
from kafka_forensics.replay.events import LINE_COLUMNS, attr, attrs_of, compact_event, compact_events
from kafka_forensics.replay.local import replay_event, replay_events
from tests.support.paths import SAMPLES

INCIDENT = SAMPLES / "real-0.10-zk-controller-kill"


def _rows() -> list[dict]:
    rows = []
    for path in sorted(p for p in INCIDENT.rglob("*.log*") if p.is_file()):
        rows += parse_file(path.read_bytes(), str(path.relative_to(INCIDENT))).events
    return rows


def test_a_batch_converts_as_each_row_does_and_leaves_the_rows_alone():
    rows = _rows()
    before = [dict(r) for r in rows]
    events = replay_events(rows)
    assert events == [replay_event(r) for r in rows]
    assert rows == before
    assert all(set(e) == set(LINE_COLUMNS) for e in events)
    assert any(e["isr"] for e in events) and all(e["isr"] is None or type(e["isr"]) is tuple for e in events)
    assert all(e["ts"] is None or e["ts"].tzinfo is not None for e in events)
    with_attrs = [(r, e) for r, e in zip(rows, events) if r["attrs"]]
    assert with_attrs
    for row, event in with_attrs:
        assert attrs_of(event) == row["attrs"]
        assert all(attr(event, key) == value for key, value in row["attrs"].items())


def test_rows_of_several_shapes_keep_their_own_columns():
    first, second, third = _rows()[:3]
    untyped = {k: v for k, v in second.items() if k != "template"}
    for mixed in ([first, untyped, third], [untyped, first, third]):
        events = compact_events(mixed, micros=True)
        assert events == [compact_event(row, micros=True) for row in mixed]
        assert ["template" in e for e in events] == ["template" in row for row in mixed]


def test_an_attribute_named_like_another_ones_value():
    event = compact_event({"attrs": {"detail": "topic_id", "topic_id": "qV5pm1PUQIqcUJ5fJ3xkUw"}})
    assert attr(event, "topic_id") == "qV5pm1PUQIqcUJ5fJ3xkUw"
    assert attr(event, "detail") == "topic_id"
    assert attr(event, "partitions") is None and attr(compact_event({"attrs": {}}), "detail") is None
