"""The events as the replay reads them: one dict per line whose values are atomics and tuples.

Why this shape: a replay keeps every line of its input alive while it runs, and CPython's cycle
collector scans every *tracked* container it holds, again at each collection of an older
generation. A dict is tracked as soon as a container is put into it (a list, a dict, a tuple not
yet untracked), so the parser's rows, with lists for broker lists and a map for ``attrs``, were
all scanned, and so was everything the replay built from them (timeline rows holding ISR lists):
on the generated 2.4 TRACE log a third of the replay's CPU (bench/RESULTS.md, "Replay µs/event").
A dict holding only atomics and untracked tuples is never tracked. CPython untracks a tuple of atomics at the first collection that sees it, so
``replay_events`` makes a batch's tuples first, one young collection (a few hundred objects)
untracks them, and only then are the dicts built.

The contract (every producer hands the replay this: ``replay.local.replay_event(s)`` for the
parser's rows, the Spark job's ``mapInArrow`` workers for Arrow rows):

* the list columns of the events table (``core.tables.EVENT_FIELDS``) as tuples;
* ``attrs`` (the map column) as one flat tuple ``(key, value, key, value, ...)`` or None, read with ``attr``;
* ``ts`` an aware UTC datetime (the parser's rows carry microseconds);
* only the columns the replay reads (``REPLAY_COLUMNS``; in process also ``template``).
"""

from __future__ import annotations

import gc
from datetime import datetime, timezone
from functools import lru_cache
from itertools import chain, repeat
from operator import itemgetter
from typing import Callable, Iterable, Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kafka_forensics.core.tables import EVENT_FIELDS

# The columns of the events table the replay reads. The Spark job selects them (with its ``cluster``; message and
# stack only on the lines a rule reads them of); the in-process replay also reads ``template``, with which
# it dates a broker's release (the job asks Spark for the distinct templates instead).
REPLAY_COLUMNS = (
    "source_file",
    "line_no",
    "broker",
    "ts",
    "level",
    "log_kind",
    "dialect",
    "event_type",
    "controller_id",
    "controller_epoch",
    "topic",
    "partition",
    "replica",
    "from_state",
    "to_state",
    "leader",
    "leader_epoch",
    "isr",
    "replicas",
    "partition_epoch",
    "state_controller_epoch",
    "correlation_id",
    "target_broker",
    "live_brokers",
    "added_brokers",
    "deleted_brokers",
    "attrs",
    "message",
    "stack",
)
LINE_COLUMNS = (*REPLAY_COLUMNS, "template")
# What each engine hands one partition's replay: its lines' ``cluster`` and ``REPLAY_COLUMNS``.
GROUP_COLUMNS = ("cluster", *REPLAY_COLUMNS)
# The lines whose message and stack a rule reads; both replay engines hand the replay no text for the others.
TEXT_EVENT_TYPES = frozenset(
    {"partition_state_change_failed", "replica_state_change_failed", "no_replica_alive", "live_brokers"}
)
assert set(LINE_COLUMNS) <= {f.name for f in EVENT_FIELDS}
ATTRS = "attrs"
# the columns whose values are containers, from the table's schema: lists of broker ids, the attrs map
LIST_COLUMNS = frozenset(f.name for f in EVENT_FIELDS if pa.types.is_list(f.type))
assert {f.name for f in EVENT_FIELDS if pa.types.is_map(f.type)} == {ATTRS}
# rows ``compact_events`` converts per young collection (the Spark job's workers convert one Arrow batch at a time:
# ``compact_batch``, one Arrow batch at a time)
BATCH_ROWS = 4096


def attr(event: dict, key: str) -> Optional[str]:
    """The value of ``attrs[key]`` of an event (None if the line has no such attribute)."""
    flat = event.get(ATTRS)
    if flat:
        for i in range(0, len(flat), 2):
            if flat[i] == key:
                return flat[i + 1]
    return None


def attrs_of(event: dict) -> dict[str, str]:
    """Every attribute of an event as a dict, for a rule that reads several of them."""
    flat = event.get(ATTRS) or ()
    return dict(zip(flat[::2], flat[1::2]))


def _flat(value) -> Optional[tuple]:
    """A map value (a dict in the parser's rows, a list of pairs in Arrow's ``to_pylist``) as one flat tuple
    ``(key, value, key, value, ...)``: strings only, so a young collection untracks it at once (a tuple of
    pairs needs the pairs untracked first, and a collection does not see them in that order)."""
    pairs = value.items() if isinstance(value, dict) else value
    return tuple(chain.from_iterable(pairs)) or None


def _compact(name: str, value, micros: bool):
    """One value as the contract has it (``value`` not None)."""
    if name in LIST_COLUMNS:
        return tuple(value)
    if name == ATTRS:
        return _flat(value)
    if micros and name == "ts":
        return datetime.fromtimestamp(value / 1e6, timezone.utc)
    return value


def _columns(row: dict) -> tuple[str, ...]:
    """The columns of ``row`` an event keeps: ``LINE_COLUMNS``, and ``cluster`` where the job added it."""
    return tuple(c for c in ("cluster", *LINE_COLUMNS) if c in row)


def compact_event(row: dict, micros: bool = False) -> dict:
    """One row as the replay reads it (a copy). ``micros``: ``ts`` is in microseconds (the parser's rows).

    The tuples made here are still tracked, and so is the dict: ``compact_events`` is the form that
    leaves nothing for the collector, this one is for a few rows (tests, notebooks)."""
    return {c: None if row[c] is None else _compact(c, row[c], micros) for c in _columns(row)}


def _column(name: str, values: Iterable, micros: bool) -> list:
    """The values of column ``name`` as the contract has them (containers as tuples, ``ts`` a datetime)."""
    if name in LIST_COLUMNS:
        return [None if v is None else tuple(v) for v in values]
    if name == ATTRS:
        return [_flat(v) if v else None for v in values]
    if micros and name == "ts":
        return instants(values)
    return values if isinstance(values, list) else list(values)


def instants(micros: Iterable[Optional[int]]) -> list:
    """Microseconds since the epoch as aware UTC datetimes (None stays None)."""
    return [None if v is None else datetime.fromtimestamp(v / 1e6, timezone.utc) for v in micros]


def _converted(name: str, micros: bool) -> bool:
    return name in LIST_COLUMNS or name == ATTRS or (micros and name == "ts")


@lru_cache(maxsize=None)
def _builder(names: tuple[str, ...], converted: tuple[str, ...]) -> Callable[..., dict]:
    """``make(row, *values)``: the event of ``row`` (its columns ``names``), the ``converted`` ones taken from
    ``values`` in that order. Generated once per set of columns, as a named tuple's class is: the event is a
    dict display, built presized in one call per row (a dict grown key by key costs twice as much)."""
    values = {name: f"_{i}" for i, name in enumerate(converted)}
    items = ", ".join(f"{name!r}: {values.get(name, f'row[{name!r}]')}" for name in names)
    namespace: dict = {}
    exec(f"def make(row, {', '.join(values.values())}):\n    return {{{items}}}\n", namespace)
    return namespace["make"]


def compact_events(rows: Iterable[dict], micros: bool = False) -> list[dict]:
    """``compact_event`` of every row, built so that the cycle collector never tracks an event: a batch at a
    time, the columns that hold containers are turned into tuples first, one young collection untracks them
    (they hold only atomics), and only then are the dicts built, from values that are all atomic or untracked.
    A batch whose rows do not all have the same columns is converted row by row (``compact_event``)."""
    rows = rows if isinstance(rows, list) else list(rows)
    out: list[dict] = []
    for start in range(0, len(rows), BATCH_ROWS):
        batch = rows[start : start + BATCH_ROWS]
        names = _columns(batch[0])
        converted = tuple(name for name in names if _converted(name, micros))
        if len(set(map(len, batch))) > 1:  # rows of several shapes: a column of some would be dropped
            out.extend(compact_event(row, micros) for row in batch)
            continue
        try:
            columns = [_column(name, map(itemgetter(name), batch), micros) for name in converted]
            gc.collect(0)  # the tuples made above hold only atomics: this young collection untracks them
            events = list(map(_builder(names, converted), batch, *columns))
        except KeyError:
            events = [compact_event(row, micros) for row in batch]
        out.extend(events)
    return out


def _arrow_values(name: str, column: pa.Array | pa.ChunkedArray) -> list:
    """The values of an Arrow column as the contract has them, converted by Arrow where Arrow is quick, and each
    distinct value converted once.

    Why: the replay's lines come sorted by partition (``jobs.replay_streams``), so a partition's broker lists and
    attributes repeat from one line to the next (86 % of the rows of a 4,096-row batch of the generated 1 M table,
    2026-11-27), and its times repeat across partitions (about 600 distinct in 4,096). Converting a value per row
    cost 0.31 µs a row for a time, 0.22-0.37 for a broker list; converting a value once and handing the same
    (immutable) object to every row that repeats it costs 0.09-0.12.

    Two columns are not left to ``to_pylist`` at all: a timestamp with a time zone becomes a datetime through a
    ``zoneinfo`` lookup per value (3.1 µs/row, against 0.35 for the instant's microseconds through ``_column``), and
    a map becomes a list of pairs per row, flattened again here (1.2 µs/row, against 0.6 read from its keys, items
    and offsets)."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if column.null_count == len(column):
        return [None] * len(column)
    if pa.types.is_timestamp(column.type):
        micros = epoch_micros(column)
        if micros.null_count:
            return instants(micros.to_pylist())
        distinct, at = np.unique(micros.to_numpy(), return_inverse=True)
        return list(map(instants(distinct.tolist()).__getitem__, at.tolist()))
    if pa.types.is_list(column.type) or pa.types.is_map(column.type):
        repeats = _repeats_previous(column)
        if repeats is None or 4 * np.count_nonzero(repeats) < len(column):  # finding the firsts costs more
            return _containers(name, column)
        firsts = _containers(name, column.filter(pa.array(~repeats)))
        return list(map(firsts.__getitem__, (np.cumsum(~repeats) - 1).tolist()))
    return _column(name, column.to_pylist(), micros=False)


def epoch_micros(column: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """A timestamp column's microseconds since the epoch (its instants, whatever its unit and time zone)."""
    return column.cast(pa.timestamp("us", column.type.tz)).cast(pa.int64())


def _containers(name: str, column: pa.Array) -> list:
    """Each row of a list or map column as the contract has it (a tuple, a flat tuple of pairs, or None)."""
    if pa.types.is_list(column.type):
        return _column(name, column.to_pylist(), micros=False)
    # a slice's offsets index its parent's whole child arrays: only its own part is converted
    offsets, valid = column.offsets.to_pylist(), column.is_valid().to_pylist()
    first, end = offsets[0], offsets[-1]
    flat: list = [None] * (2 * (end - first))
    flat[0::2] = column.keys.slice(first, end - first).to_pylist()
    flat[1::2] = column.items.slice(first, end - first).to_pylist()
    return [
        tuple(flat[2 * (offsets[i] - first) : 2 * (offsets[i + 1] - first)]) or None if valid[i] else None
        for i in range(len(column))
    ]


def _repeats_previous(column: pa.Array) -> Optional[np.ndarray]:
    """Whether each row of a list or map column equals the row before it (the first row: False), computed on the
    column's flat children: two rows are equal when both are null, or both are valid with the same length and the
    same elements. None when an element is null (never in the events table's lists and maps)."""
    offsets = np.asarray(column.offsets)
    first, end = int(offsets[0]), int(offsets[-1])
    if pa.types.is_map(column.type):
        children = [column.keys.slice(first, end - first), column.items.slice(first, end - first)]
    else:
        children = [column.values.slice(first, end - first)]
    if any(child.null_count for child in children):
        return None
    codes = [
        np.asarray(pc.dictionary_encode(child).indices if pa.types.is_string(child.type) else child)
        for child in children
    ]
    lengths = np.diff(offsets)
    valid = np.asarray(column.is_valid())
    repeats = np.zeros(len(column), dtype=bool)
    repeats[1:] = (lengths[1:] == lengths[:-1]) & (valid[1:] == valid[:-1])
    # each element against the one a row's length before it: the same place in the previous row, when its
    # length is the same
    row_of = np.repeat(np.arange(len(column)), lengths)
    back = np.arange(end - first) - lengths[row_of]
    differs = back < 0
    for code in codes:
        differs |= code != code[np.maximum(back, 0)]
    repeats &= np.bincount(row_of[differs], minlength=len(column)) == 0
    return repeats


def compact_batch(batch: pa.RecordBatch | pa.Table, **extra: list) -> list[dict]:
    """The events of an Arrow batch of the events table (its replayed columns, ``LINE_COLUMNS``, and ``cluster``),
    as ``compact_events`` builds them; ``extra``: more columns, their values already as the contract has them
    (``cluster`` worked out by the caller). The Spark job's workers and the driver engine read events this way."""
    kept = [(n, c) for n, c in zip(batch.schema.names, batch.columns) if n == "cluster" or n in LINE_COLUMNS]
    names = tuple(n for n, _ in kept) + tuple(extra)
    values = [_arrow_values(n, c) for n, c in kept] + list(extra.values())
    gc.collect(0)  # as in compact_events
    return list(map(_builder(names, names), repeat(None), *values))
