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
from typing import Callable, Iterable, Optional, Sequence

import pyarrow as pa

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
# ``compact_columns``, at most 1,000 rows, jobs/replay_job.arrow_batches)
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
        return [None if v is None else datetime.fromtimestamp(v / 1e6, timezone.utc) for v in values]
    return values if isinstance(values, list) else list(values)


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


def compact_columns(names: Sequence[str], columns: Sequence[list], micros: bool = False) -> list[dict]:
    """The events of a batch given as columns (an Arrow batch's ``to_pydict``, in the Spark job's workers), as
    ``compact_events`` builds them, without a row dict on the way (Arrow's ``to_pylist`` builds one per row)."""
    kept = tuple(name for name in names if name == "cluster" or name in LINE_COLUMNS)
    by_name = dict(zip(names, columns))
    values = [_column(name, by_name[name], micros) for name in kept]
    gc.collect(0)  # as in compact_events
    return list(map(_builder(kept, kept), repeat(None), *values))
