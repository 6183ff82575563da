"""The event contract (replay/events.py): what every producer hands the replay, on real lines (a recorded
incident parsed by ``parse_file``), converted a batch at a time and row by row."""

from __future__ import annotations

import pyarrow as pa

from kafka_forensics.parsers.records import parse_file
from kafka_forensics.replay.events import LINE_COLUMNS, attr, attrs_of, compact_batch, compact_event, compact_events
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


def _incident_table():
    """The incident's events as the events table holds them (Arrow, the parse job's own conversion)."""
    from kafka_forensics.parsers.columnar import parse_file_columnar

    tables, rows = [], []
    for path in sorted(p for p in INCIDENT.rglob("*.log*") if p.is_file()):
        name, data = str(path.relative_to(INCIDENT)), path.read_bytes()
        tables.append(parse_file_columnar(data, name, row_by_row_below=0).events)
        rows += parse_file(data, name).events
    return pa.concat_tables(tables), rows


def test_an_arrow_batch_converts_as_the_parsers_rows_do():
    """``compact_batch`` reads timestamps and the attrs map through Arrow itself, not ``to_pylist``: the events are
    the same as the parser's rows give, in batches that are slices of their table (the map's offsets then index
    the whole table's entries), in a time zone other than UTC (Spark hands the session's), with ``extra``."""
    table, rows = _incident_table()
    expected = [{c: e[c] for c in LINE_COLUMNS} for e in replay_events(rows)]
    assert table.num_rows == len(expected) and any(e["attrs"] for e in expected)
    batches = table.select(list(LINE_COLUMNS)).to_batches(max_chunksize=7)
    assert any(b.column("attrs").offset for b in batches)
    assert [e for b in batches for e in compact_batch(b)] == expected
    zoned = table.set_column(
        table.schema.get_field_index("ts"), "ts", table.column("ts").cast(pa.timestamp("us", "America/New_York"))
    )
    events = compact_batch(zoned, cluster=["c1"] * len(rows))
    assert [{c: e[c] for c in LINE_COLUMNS} for e in events] == expected
    assert {e["cluster"] for e in events} == {"c1"} and all(type(e["isr"]) in (tuple, type(None)) for e in events)
