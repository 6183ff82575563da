"""The event contract (replay/events.py): what every producer hands the replay, on real lines (a recorded
incident parsed by ``parse_file``), converted a batch at a time and row by row."""

from __future__ import annotations

from itertools import pairwise

import pyarrow as pa

from kafka_forensics.parsers.records import parse_file
from kafka_forensics.replay.events import LINE_COLUMNS, attr, attrs_of, compact_batch, compact_event, compact_events
from kafka_forensics.replay.local import replay_event, replay_events
from tests.support.paths import SAMPLES

INCIDENT = SAMPLES / "real-0.10-zk-controller-kill"
TRACE_INCIDENT = SAMPLES / "real-2.8-zk-controller-kill-trace"


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


def _incident_table(incident=INCIDENT):
    """The incident's events as the events table holds them (Arrow, the parse job's own conversion)."""
    from kafka_forensics.parsers.columnar import parse_file_columnar

    tables, rows = [], []
    for path in sorted(p for p in incident.rglob("*.log*") if p.is_file()):
        name, data = str(path.relative_to(incident)), path.read_bytes()
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


def _by_partition(table: pa.Table) -> pa.Table:
    """The lines in the order the replay reads a bucket (``jobs.replay_streams``): by partition, then time."""
    return table.sort_by([("topic", "ascending"), ("partition", "ascending"), ("ts", "ascending")])


def _with_edge_rows(table: pa.Table) -> pa.Table:
    """The incident's lines, and after them the same lines again with what no real line has but a row may: an ISR
    and a replica list each emptied, nulled or given a null broker, and an attribute map emptied, every third row,
    so that equal, empty and null values follow each other."""
    n = table.num_rows
    edits = {
        "isr": [[] if k % 3 == 0 else None if k % 3 == 1 else v for k, v in enumerate(table.column("isr").to_pylist())],
        "replicas": [v + [None] if v and k % 3 == 0 else v for k, v in enumerate(table.column("replicas").to_pylist())],
        "attrs": [[] if v and k % 3 == 2 else v for k, v in enumerate(table.column("attrs").to_pylist())],
    }
    edited = table
    for name, values in edits.items():
        at = edited.schema.get_field_index(name)
        edited = edited.set_column(at, name, pa.array(values, edited.schema.field(name).type))
    assert edited.num_rows == n
    return pa.concat_tables([table, edited])


def test_values_that_repeat_convert_once_and_equal_the_rows_own():
    """A bucket's lines come sorted by partition, so a partition's broker lists, attributes and times repeat from
    line to line, and ``compact_batch`` converts each distinct value once: the events equal the parser's rows
    (and, for edited rows, the row-by-row conversion) in batches of every size, and the repeats share one tuple.
    The incident logs at TRACE, so most of its lines are brokers caching the controller's UpdateMetadata states."""
    table, rows = _incident_table(TRACE_INCIDENT)
    expected = {(e["source_file"], e["line_no"]): {c: e[c] for c in LINE_COLUMNS} for e in replay_events(rows)}
    ordered = _by_partition(table.select(list(LINE_COLUMNS)))
    for size in (1, 7, 500, ordered.num_rows):
        events = [e for b in ordered.to_batches(max_chunksize=size) for e in compact_batch(b)]
        assert [expected[e["source_file"], e["line_no"]] for e in events] == events
    events = compact_batch(ordered)
    shared = [(a, b) for a, b in pairwise(events) if a["replicas"] and a["replicas"] == b["replicas"]]
    assert len(shared) > 20 and all(a["replicas"] is b["replicas"] for a, b in shared)
    edged = _with_edge_rows(ordered)
    by_row = [compact_event(r) for r in edged.to_pylist()]
    for size in (3, 64, edged.num_rows):
        events = [e for b in edged.to_batches(max_chunksize=size) for e in compact_batch(b)]
        assert [{c: e[c] for c in LINE_COLUMNS if c != "ts"} for e in events] == [
            {c: e[c] for c in LINE_COLUMNS if c != "ts"} for e in by_row
        ]
        assert [e["ts"] for e in events] == [e["ts"] for e in by_row]
    assert any(e["isr"] == () for e in by_row) and any(e["replicas"] and None in e["replicas"] for e in by_row)
