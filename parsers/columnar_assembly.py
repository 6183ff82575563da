"""The fields of all typed records → event columns, one conversion per field (not per template).

Why: a real log mixes hundreds of templates with a few hundred rows each, and converting them
template by template costs a handful of Polars calls per template, more than the rows themselves.

``fields.apply_fields`` converts a row's (field, text) pairs in line order: where two fields write
one column the later one wins, and attribute keys stay in the order they were first written. All
rows of one **shape** (identity branch and template, ``columnar._Classifier``) have the same fields
in the same order. Here each field is converted once over every row that has it
(``columnar_fields``), and the results are merged: a column that several fields write takes them
in an order every shape agrees with, and the attribute keys come in an order every shape agrees
with. A shape that contradicts the shapes taken before it (larger ones first), or that writes one
attribute from two fields (its place in the map would depend on the row), is left to the reference
(``keep`` is False on its rows), as are the rows a converter is unsure about. A field a shape has
twice (the identity's topic and partition, then the message's) is taken where it alone writes its
columns and no attribute: its later text wins where present, as in ``apply_fields``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa

from kafka_forensics.core.tables import EVENT_FIELDS

from .columnar_fields import columnar_converter, present, text_by_text

_MAP = next(f.type for f in EVENT_FIELDS if f.name == "attrs")
# A field on fewer rows than this is converted text by text by fields.py itself (``text_by_text``). A
# column-wise conversion has a fixed cost (a few Polars calls, one per text shape for request states)
# that a handful of texts converted one by one (a few us each) does not reach; in a small file or a
# block of a mixed log, most fields are that rare. (Their rows used to go to the reference whole, at
# about 20 us each, and made the block's table be sorted again to put them in line order.)
FEW_ROWS = 64


@dataclass(frozen=True)
class Shape:
    rows: np.ndarray  # positions (0..n-1) of its rows
    roles: tuple[str, ...]  # its fields, in line order


@dataclass
class Assembled:
    columns: dict[str, pl.Series]  # one value per row (null where no field wrote it)
    attrs: pa.Array  # the attribute map per row (keys in an order every kept shape follows)
    keep: np.ndarray  # bool per row: False = the reference builds this row


@dataclass
class _Converted:
    """One field's conversion, for the rows that have it (``positions``)."""

    positions: np.ndarray
    columns: dict[str, pl.Series]
    attrs: list[tuple[str, pl.Series]]


def assemble(n: int, shapes: list[Shape], texts: dict[str, tuple[np.ndarray, pl.Series]]) -> Assembled:
    """``texts``: per field, the positions of the rows that have it and their texts."""
    keep = np.ones(n, bool)
    converted: dict[str, _Converted] = {}
    for role, (positions, values) in texts.items():
        convert = columnar_converter(role) if len(positions) >= FEW_ROWS else None
        out = convert(values) if convert is not None else text_by_text(role, values)
        if out is None:
            keep[positions] = False
            continue
        if out.fallback is not None:
            keep[positions[out.fallback]] = False
        converted[role] = _Converted(positions, out.columns, out.attrs)
    key_order = _Orders()
    column_orders: dict[str, _Orders] = {}
    for shape in sorted(shapes, key=lambda s: -len(s.rows)):
        if not _take(shape, converted, key_order, column_orders):
            keep[shape.rows] = False
    columns = {
        name: _placed(n, [(converted[role].positions, converted[role].columns[name]) for role in order.sorted()])
        for name, order in column_orders.items()
    }
    by_key: dict[str, list[tuple[np.ndarray, pl.Series]]] = {}
    for part in converted.values():
        for key, values in part.attrs:
            by_key.setdefault(key, []).append((part.positions, values))
    keys = [key for key in key_order.sorted() if key in by_key]
    return Assembled(columns, map_of(n, [(key, by_key[key]) for key in keys]), keep)


def _take(shape: Shape, converted: dict[str, _Converted], key_order: _Orders, column_orders: dict) -> bool:
    """Add the orders ``shape`` needs; False (nothing added) if it cannot be assembled."""
    if any(r not in converted for r in shape.roles):
        return False
    roles = list(dict.fromkeys(shape.roles))
    keys: list[str] = []
    writer: dict[str, str] = {}
    writers: dict[str, list[str]] = {}
    for role in roles:
        for key, _ in converted[role].attrs:
            if writer.setdefault(key, role) != role:
                return False  # one attribute from two fields
            keys.append(key)
        for name in converted[role].columns:
            writers.setdefault(name, []).append(role)
    for role in roles:
        # a field the line has twice (the identity's partition, then the message's): its later
        # text wins where present, as in ``apply_fields``, if no other field writes its columns
        # (they could come between) and it writes no attribute (its place is its first write)
        if shape.roles.count(role) > 1 and (
            converted[role].attrs or any(writers[name] != [role] for name in converted[role].columns)
        ):
            return False
    wanted = [(key_order, keys)] + [(column_orders.setdefault(c, _Orders()), w) for c, w in writers.items()]
    added: list[tuple[_Orders, list]] = []
    for order, sequence in wanted:
        edges = order.add(sequence)
        if edges is None:
            for taken, undo in added:
                taken.remove(undo)
            return False
        added.append((order, edges))
    return True


class _Orders:
    """Precedences between names that every shape taken so far follows (an acyclic graph)."""

    def __init__(self) -> None:
        self.after: dict[str, set[str]] = {}
        self.seen: dict[str, int] = {}  # first appearance: a stable order among free names

    def add(self, sequence: list[str]) -> list[tuple[str, str]] | None:
        """Require the names in this order; None (nothing changed) if that contradicts an earlier
        requirement. Returns the precedences it added."""
        added: list[tuple[str, str]] = []
        for a, b in itertools.pairwise(sequence):
            if b in self.after.get(a, ()):
                continue
            if self._reaches(b, a):
                self.remove(added)
                return None
            self.after.setdefault(a, set()).add(b)
            added.append((a, b))
        for name in sequence:
            self.seen.setdefault(name, len(self.seen))
            self.after.setdefault(name, set())
        return added

    def remove(self, edges: list[tuple[str, str]]) -> None:
        for a, b in edges:
            self.after[a].discard(b)

    def _reaches(self, start: str, goal: str) -> bool:
        stack, visited = [start], set()
        while stack:
            name = stack.pop()
            if name == goal:
                return True
            if name not in visited:
                visited.add(name)
                stack.extend(self.after.get(name, ()))
        return False

    def sorted(self) -> list[str]:
        """Every name, each after all names that precede it (ties: first appearance)."""
        incoming = dict.fromkeys(self.seen, 0)
        for targets in self.after.values():
            for b in targets:
                incoming[b] += 1
        ready = sorted((n for n, k in incoming.items() if not k), key=self.seen.__getitem__)
        out = []
        while ready:
            name = ready.pop(0)
            out.append(name)
            for b in sorted(self.after[name], key=self.seen.__getitem__):
                incoming[b] -= 1
                if not incoming[b]:
                    ready.append(b)
            ready.sort(key=self.seen.__getitem__)
        return out


def _placed(n: int, parts: list[tuple[np.ndarray, pl.Series]]) -> pl.Series:
    """One value per row from (positions, values) parts: where several parts have a value for a
    row, the last one's (``apply_fields``: a later write wins); null where none has."""
    positions, values = parts[0]
    if len(parts) == 1 and len(positions) == n and (positions[1:] > positions[:-1]).all():
        return values  # every row, in order
    index = np.full(n, -1, np.int64)
    offset = 0
    for positions, values in parts:
        if values.null_count():
            written = np.flatnonzero(present(values))
            at, source = positions[written], offset + written
        else:  # the usual case: a value on every row that has the field
            at, source = positions, np.arange(offset, offset + len(values))
        if at.size > 1 and not (at[1:] > at[:-1]).all() and np.bincount(at).max() > 1:
            # a field twice on a row: its later text
            _, last = np.unique(at[::-1], return_index=True)
            at, source = at[at.size - 1 - last], source[at.size - 1 - last]
        index[at] = source
        offset += len(values)
    joined = _concat([v for _, v in parts])
    return joined.gather(pl.Series(pa.array(index, mask=index < 0)))


def _concat(series: list[pl.Series]) -> pl.Series:
    if len(series) == 1:
        return series[0]
    if len({s.dtype for s in series}) == 1:
        return pl.concat(series)
    return pl.concat([s.to_frame("v") for s in series], how="vertical_relaxed").to_series()


def map_of(n: int, attrs: list[tuple[str, list[tuple[np.ndarray, pl.Series]]]]) -> pa.Array:
    """The attribute map per row: the keys a row has a (non-null) value for, in the given order;
    null where it has none. ``attrs``: per key, (positions, values) parts."""
    if not attrs:
        return pa.nulls(n, _MAP)
    rows, key_numbers, values = [], [], []
    for k, (_, parts) in enumerate(attrs):
        for positions, texts in parts:
            written = present(texts)
            at = positions[written]
            rows.append(at)
            key_numbers.append(np.full(len(at), k, np.int32))
            texts = texts if written.all() else texts.filter(pl.Series(written))
            values.append(texts.cast(pl.String).to_arrow().cast(pa.large_string()))
    row = np.concatenate(rows)
    key = np.concatenate(key_numbers)
    order = np.lexsort((key, row))  # per row, keys in order
    counts = np.bincount(row, minlength=n)
    offsets = np.zeros(n + 1, np.int32)
    np.cumsum(counts, out=offsets[1:])
    items = pa.concat_arrays(values).cast(pa.string()).take(pa.array(order))
    key_array = pa.array([k for k, _ in attrs], pa.string()).take(pa.array(key[order]))
    return pa.MapArray.from_arrays(
        pa.array(offsets, pa.int32()), key_array, items, type=_MAP, mask=pa.array(counts == 0)
    )
