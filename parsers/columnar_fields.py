"""The field converters of ``fields.py``, column-wise: a column of field texts → event columns.

``fields.py`` stays the definition: each converter here does what its counterpart does to one
text, for a whole column at once, using the counterpart's own regexes (translated by
``vector_regex``; only exact translations are used). Where a text is one the column-wise version
cannot be sure about (a number too long for Int32, a composite value in an unusual shape), its
row is marked ``fallback`` and the caller converts that row with ``fields.py`` itself.

A conversion writes a column only where the text is not null (a field absent from the line),
as ``apply_fields`` only calls converters for fields that are present. Every text is ASCII: the
column-wise parse reads only ASCII record lines (``columnar._header_columns``), and the
translations are exact on ASCII text only. Attribute keys come in a fixed order per converter,
which is the order ``fields.py`` inserts them in for every row the column-wise version accepts.

A Polars query costs tens of microseconds however few its rows, and a block converts every field
of every template it holds: masks are numpy arrays (``present``, ``certain``), not Polars queries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from kafka_forensics.core.tables import EVENT_FIELDS

from . import fields as F
from .vector_regex import translate

INT32_TEXT = r"^-?[0-9]{1,9}$"  # int() of it fits an Int32 column (10 digits may not)
TOO_LONG_INT = "[0-9]{10}"
_INT_LIST = pl.List(pl.Int32)
_TYPES = {f.name: f.type for f in EVENT_FIELDS}


@dataclass
class Conversion:
    columns: dict[str, pl.Series] = field(default_factory=dict)
    attrs: list[tuple[str, pl.Series]] = field(default_factory=list)  # in insertion order
    fallback: np.ndarray | None = None  # bool per text: rows to convert with fields.py instead

    def give_up(self, rows: pl.Series | np.ndarray) -> None:
        mask = certain(rows)
        self.fallback = mask if self.fallback is None else (self.fallback | mask)


def present(values: pl.Series) -> np.ndarray:
    """Where ``values`` has a value, as a numpy mask (no query where it has no nulls)."""
    nulls = values.null_count()
    if not nulls:
        return np.ones(len(values), bool)
    if nulls == len(values):
        return np.zeros(len(values), bool)
    return pc.is_valid(values.to_arrow(compat_level=pl.CompatLevel.newest())).to_numpy(zero_copy_only=False)


def certain(mask: pl.Series | np.ndarray) -> np.ndarray:
    """A boolean column as a numpy mask, null as False."""
    if isinstance(mask, np.ndarray):
        return mask
    array = mask.to_arrow()
    if array.null_count:
        array = pc.fill_null(array, False)
    return array.to_numpy(zero_copy_only=False)


def _vector(pattern: re.Pattern) -> str:
    found = translate(pattern)
    if found is None or not found.exact:
        raise ValueError(f"no exact column-wise form of {pattern.pattern!r}")
    return found.pattern


def int_column(texts: pl.Series, out: Conversion) -> pl.Series:
    """``int(text)`` for every text that fits an Int32 column; other texts fall back."""
    out.give_up(present(texts) & ~certain(texts.str.contains(INT32_TEXT)))
    return texts.cast(pl.Int32, strict=False)


def int_list_column(texts: pl.Series, out: Conversion) -> pl.Series:
    """``fields._ints(text)``: every ``-?\\d+`` in the text (a text with a number too long for Int32
    falls back)."""
    out.give_up(texts.str.contains(TOO_LONG_INT))
    return texts.str.extract_all(r"-?[0-9]+").cast(_INT_LIST, strict=False)


def _set(out: Conversion, column: str, values: pl.Series) -> None:
    """A later write wins where it writes (as in a dict), earlier values stay elsewhere."""
    old = out.columns.get(column)
    out.columns[column] = values if old is None else values.zip_with(values.is_not_null(), old)


# ---- one column-wise converter per kind of fields.py converter ------------------------------------


def _int(converter: F._int) -> Callable[[pl.Series], Conversion]:
    def run(texts: pl.Series) -> Conversion:
        out = Conversion()
        out.columns[converter.column] = int_column(texts, out)
        return out

    return run


def _str(converter: F._str) -> Callable[[pl.Series], Conversion]:
    return lambda texts: Conversion(columns={converter.column: texts})


def _int_list(converter: F._int_list) -> Callable[[pl.Series], Conversion]:
    def run(texts: pl.Series) -> Conversion:
        out = Conversion()
        out.columns[converter.column] = int_list_column(texts, out)
        return out

    return run


def _attr(converter: F._attr) -> Callable[[pl.Series], Conversion]:
    return lambda texts: Conversion(attrs=[(converter.key, texts)])


def _flag(converter: F._flag) -> Callable[[pl.Series], Conversion]:
    return lambda texts: Conversion(
        attrs=[(converter.key, pl.Series(["true"] * len(texts)).zip_with(texts.is_not_null(), texts))]
    )


_SOME = _vector(F._SOME)


def _attr_unwrapped(converter: F._attr_unwrapped) -> Callable[[pl.Series], Conversion]:
    def run(texts: pl.Series) -> Conversion:
        out = Conversion()
        inner = texts.str.extract(_SOME, 1)
        out.attrs.append((converter.key, inner.zip_with(inner.is_not_null(), texts)))
        return out

    return run


_TOPIC_PARTITION = r"^(.*)-([0-9]{1,9})$"  # str.rpartition("-") of a TOPIC_PARTITION text


def _topic_partition(texts: pl.Series) -> Conversion:
    out = Conversion()
    parts = texts.str.extract_groups(_TOPIC_PARTITION)
    topic, partition = parts.struct.field("1"), parts.struct.field("2")
    out.give_up(present(texts) & ~present(topic))
    out.columns["topic"] = topic
    out.columns["partition"] = partition.cast(pl.Int32)
    return out


_BROKER_ID = _vector(F._BROKER_ID)


def _broker_ref(texts: pl.Series) -> Conversion:
    out = Conversion()
    groups = texts.str.extract_groups(_BROKER_ID)
    number = pl.select(pl.coalesce([groups.struct.field(str(i)) for i in range(1, 5)])).to_series()
    out.columns["target_broker"] = int_column(number, out)
    out.attrs.append(("target_broker_ref", texts))
    return out


_LICE = _vector(F._LICE)


def _leader_isr_state(texts: pl.Series) -> Conversion:
    out = Conversion()
    g = texts.str.extract_groups(_LICE)
    group = [g.struct.field(str(i)) for i in range(1, 7)]
    out.columns["leader"] = int_column(group[0], out)
    out.columns["isr"] = int_list_column(group[1], out)
    recovery = group[2]
    out.attrs.append(
        ("leader_recovery_state", recovery.zip_with(recovery != "", pl.Series([None] * len(texts), dtype=pl.String)))
    )
    out.columns["leader_epoch"] = int_column(group[3], out)
    out.columns["partition_epoch"] = int_column(group[4], out)
    out.columns["state_controller_epoch"] = int_column(group[5], out)
    return out


_ALL_REPLICAS = _vector(F._ALL_REPLICAS)


def _partition_state_info(texts: pl.Series) -> Conversion:
    out = _leader_isr_state(texts)
    replicas = texts.str.extract(_ALL_REPLICAS, 1)
    out.columns["replicas"] = int_list_column(replicas, out)
    return out


_LAI_INT = {column: _vector(rx) for column, rx in F._LAI_INT.items()}
_LAI_ISR = _vector(F._LAI_ISR)
_LAI_ISR_STATES = _vector(F._LAI_ISR_STATES)
_BROKER_ID_IN_STATE = _vector(F._BROKER_ID_IN_STATE)
_LAI_LRS = _vector(F._LAI_LRS)


def _leader_and_isr(texts: pl.Series) -> Conversion:
    out = Conversion()
    for column, rx in _LAI_INT.items():
        out.columns[column] = int_column(texts.str.extract(rx, 1), out)
    states = texts.str.extract(_LAI_ISR_STATES, 1)
    brokers = states.str.extract_all(_BROKER_ID_IN_STATE).list.eval(pl.element().str.extract(_BROKER_ID_IN_STATE, 1))
    out.give_up(states.str.contains(TOO_LONG_INT))
    from_states = brokers.list.eval(pl.element().cast(pl.Int32)).cast(_INT_LIST)
    plain = int_list_column(texts.str.extract(_LAI_ISR, 1), out)
    out.columns["isr"] = from_states.zip_with(states.is_not_null(), plain)
    out.attrs.append(("leader_recovery_state", texts.str.extract(_LAI_LRS, 1)))
    return out


_RA = r"^ReplicaAssignment\(replicas=((?:-?[0-9]+(?:,-?[0-9]+)*)?), addingReplicas=((?:-?[0-9]+(?:,-?[0-9]+)*)?), removingReplicas=((?:-?[0-9]+(?:,-?[0-9]+)*)?)\)$"


def _replica_assignment(texts: pl.Series) -> Conversion:
    """Only the shape Kafka prints (replicas, addingReplicas, removingReplicas in this order): on
    it ``_RA_PART.findall`` meets the three keys in that order; anything else falls back."""
    out = Conversion()
    g = texts.str.extract_groups(_RA)
    replicas = g.struct.field("1")
    out.give_up(present(texts) & ~present(replicas))
    out.columns["replicas"] = int_list_column(replicas, out)
    out.attrs.append(("adding_replicas", g.struct.field("2")))
    out.attrs.append(("removing_replicas", g.struct.field("3")))
    out.attrs.append(("assignment", texts))
    return out


_ENDPOINT_ID = _vector(F._ENDPOINT_ID)


def _leader_endpoint(texts: pl.Series) -> Conversion:
    out = Conversion()
    out.columns["leader"] = int_column(texts.str.extract(_ENDPOINT_ID, 1), out)
    out.attrs.append(("leader_endpoint", texts))
    return out


_OTHER_IDENT_RULES = [(_vector(rx), columns) for rx, columns in F._OTHER_IDENT_RULES]


def _ident_other(texts: pl.Series) -> Conversion:
    """The first rule of ``fields._OTHER_IDENT_RULES`` that finds something decides the columns."""
    out = Conversion()
    out.attrs.append(("ident", texts.str.strip_chars_end(" ,:")))
    decided = pl.Series([False] * len(texts))
    written: dict[str, pl.Series] = {}
    for rx, columns in _OTHER_IDENT_RULES:
        g = texts.str.extract_groups(rx)
        hit = g.struct.field("1").is_not_null() & ~decided
        for i, column in enumerate(columns, start=1):
            value = g.struct.field(str(i))
            typed = value if column == "topic" else int_column(value.zip_with(hit, value.clear(len(value))), out)
            typed = typed.zip_with(hit, typed.clear(len(typed)))
            old = written.get(column)
            written[column] = typed if old is None else typed.zip_with(hit, old)
        decided = decided | hit
    for column, values in written.items():
        out.columns[column] = values
    if "controller_id" in written:
        broker = written.get("broker")
        out.columns["broker"] = (
            written["controller_id"]
            if broker is None
            else broker.zip_with(broker.is_not_null(), written["controller_id"])
        )
    return out


_REC_FIELD = _vector(F._REC_FIELD)


def _broker_record(converter: F._broker_record) -> Callable[[pl.Series], Conversion]:
    """``fields._broker_record``: its regex's matches in text order, each key once per row (a row
    that repeats one falls back: there a later value would overwrite an earlier one in place).
    The attributes follow the keys' order in the text, so one order must suit every text."""

    def run(texts: pl.Series) -> Conversion:
        out = Conversion()
        n = len(texts)
        pairs = (
            pl.DataFrame({"row": np.arange(n, dtype=np.int64), "found": texts.str.extract_all(_REC_FIELD)})
            .explode("found")
            .drop_nulls("found")
            .with_columns(pl.col("found").str.splitn("=", 2).alias("parts"))
            .select(
                "row",
                pl.col("parts").struct.field("field_0").alias("key"),
                pl.col("parts").struct.field("field_1").alias("value"),
            )
        )
        per_row = pairs.group_by("row", maintain_order=True).agg(
            pl.col("key"), pl.col("key").n_unique().alias("distinct")
        )
        once = pl.col("distinct") == pl.col("key").list.len()
        repeated = per_row.filter(~once)["row"].to_numpy()
        if repeated.size:
            give_up = np.zeros(n, bool)
            give_up[repeated] = True
            out.give_up(give_up)
        orders: set[tuple[str, ...]] = set()
        for keys in per_row.filter(once)["key"].unique().to_list():
            orders.add(tuple(name for key in keys for name in _record_attrs(converter.kind, key)) + ("record",))
        static = _static_order(orders | {("record",)})
        if static is None:
            out.give_up(present(texts))
            static = []
        values: dict[str, pl.Series] = {}
        for key in F._REC_ATTRS.keys() | {"brokerId"}:
            found = pairs.filter(pl.col("key") == key)
            values[key] = (
                texts.clear(n).scatter(found["row"].to_numpy(), found["value"]) if len(found) else texts.clear(n)
            )
        out.columns["target_broker"] = int_column(values["brokerId"], out)
        attrs: dict[str, pl.Series] = {"record": texts}
        for key, name in F._REC_ATTRS.items():
            attrs[name] = values[key]
            change = F._REC_CHANGES.get(key) if converter.kind == "change" else None
            if change is not None:
                attrs[change[0]] = values[key].replace(change[1])
        out.attrs.extend((name, attrs[name]) for name in static)
        return out

    return run


def _record_attrs(kind: str, key: str) -> tuple[str, ...]:
    """The attributes ``fields._broker_record`` writes for one key, in order."""
    if key not in F._REC_ATTRS:
        return ()
    change = F._REC_CHANGES.get(key) if kind == "change" else None
    return (F._REC_ATTRS[key],) + ((change[0],) if change else ())


# ---- request partition states ---------------------------------------------------------------------

# A text in the shape Kafka prints: Name(key=value, key=value, ...), every value one of the four
# shapes fields._RS_PAIR reads (quoted, [list], 1,2 csv, or a plain word). On such a text
# _RS_PAIR.findall returns exactly its key=value pairs, in order, and ", key=" occurs only between
# two pairs (a [list] holds ", " before digits only). So, per sequence of keys, the values are the
# slices between those separators. The sequences are read from the texts themselves, one at a
# time: the first text not yet placed gives a sequence, a regex of exactly that shape places every
# text that has it.
_RS_VALUE = r"(?:'[A-Za-z0-9._-]*'|\[[-0-9, ]*\]|-?[0-9]+(?:,-?[0-9]+)+|[A-Za-z0-9_.-]*)"
_RS_NAME = r"^[A-Za-z]*PartitionState\("
_RS_KEY_NAMES = re.compile(r"[(,] ?([A-Za-z0-9_]+)=")
MAX_SHAPES = 8  # key sequences tried per column; texts with yet others fall back


def _request_state(texts: pl.Series) -> Conversion:
    out = Conversion()
    n = len(texts)
    empty = texts.clear(n)
    identity = texts.str.contains("@", literal=True).fill_null(False)
    out.attrs.append(("request_state", texts.zip_with(identity, empty)))
    unplaced = (texts.is_not_null() & ~identity).to_numpy()
    columns: dict[str, pl.Series] = {}
    attr_columns: dict[str, pl.Series] = {}
    orders: list[tuple[str, ...]] = []
    python_texts = None
    for _ in range(MAX_SHAPES):
        if not unplaced.any():
            break
        first = int(np.flatnonzero(unplaced)[0])
        sample = texts[first]
        names = _RS_KEY_NAMES.findall(sample[sample.find("(") :])
        if not names or len(set(names)) != len(names):
            break  # a key twice: fields.py decides
        shape = _RS_NAME + ", ".join(re.escape(k) + "=" + _RS_VALUE for k in names) + r"\)$"
        rows = texts.str.contains(shape).fill_null(False).to_numpy() & unplaced
        if not rows[first]:
            break
        unplaced &= ~rows
        placed = pl.Series(rows)
        seps = ["(" + names[0] + "="] + [", " + k + "=" for k in names[1:]]
        starts = [texts.str.find(sep, literal=True) + len(sep) for sep in seps]
        ends = [texts.str.find(sep, literal=True) for sep in seps[1:]] + [texts.str.len_chars() - 1]
        attr_order = []
        for key, start, end in zip(names, starts, ends):
            spec = F._RS_KEYS.get(key)
            if spec is None:
                continue
            kind, column = spec
            value = texts.str.slice(start, end - start).zip_with(placed, empty)
            if kind is F._RS_INT:
                digits = value.str.contains(r"^-*[0-9]+$").fill_null(False)
                exact = value.str.contains(INT32_TEXT).fill_null(False)
                out.give_up(digits & ~exact)
                _merge(columns, column, value.zip_with(exact, empty).cast(pl.Int32, strict=False))
            elif kind is F._RS_LIST:
                _merge(columns, column, int_list_column(value, out))
            elif kind is F._RS_ATTR:
                attr_order.append(column)
                _merge(attr_columns, column, value)
            elif kind is F._RS_QUOTED:
                quoted = value.str.starts_with("'").fill_null(False)
                _merge(columns, column, value.str.slice(1, value.str.len_chars() - 2).zip_with(quoted, empty))
        orders.append(tuple(attr_order))
    del python_texts
    out.give_up(unplaced)
    for column, values in columns.items():
        out.columns[column] = values
    # one order of attribute keys must suit every shape (they follow the text's order)
    static = _static_order(set(orders))
    if static is None:
        out.give_up(present(texts) & ~certain(identity))
        static = []
    out.attrs.extend((key, attr_columns[key]) for key in static if key in attr_columns)
    return out


def _attr_keys(signature: str) -> list[str]:
    keys = []
    for key in re.findall(r"([A-Za-z0-9_]+)=", signature):
        spec = F._RS_KEYS.get(key)
        if spec is not None and spec[0] is F._RS_ATTR and spec[1] not in keys:
            keys.append(spec[1])
    return keys


def _static_order(orders: set[tuple[str, ...]]) -> list[str] | None:
    """One order of keys that every given order follows (None: two orders disagree)."""
    merged: list[str] = []
    for order in sorted(orders, key=len, reverse=True):
        positions = [merged.index(k) for k in order if k in merged]
        if positions != sorted(positions):
            return None
        for i, key in enumerate(order):
            if key not in merged:
                later = [merged.index(k) for k in order[i + 1 :] if k in merged]
                merged.insert(min(later) if later else len(merged), key)
    for order in orders:
        positions = [merged.index(k) for k in order]
        if positions != sorted(positions):
            return None
    return merged


def _merge(target: dict[str, pl.Series], column: str, values: pl.Series) -> None:
    old = target.get(column)
    target[column] = values if old is None else values.zip_with(values.is_not_null(), old)


# ---- the table: fields.py converter → column-wise converter ---------------------------------------

_BY_FUNCTION: dict[Callable, Callable[[pl.Series], Conversion]] = {
    F._topic_partition: _topic_partition,
    F._broker_ref: _broker_ref,
    F._leader_isr_state: _leader_isr_state,
    F._partition_state_info: _partition_state_info,
    F._request_state: _request_state,
    F._leader_and_isr: _leader_and_isr,
    F._replica_assignment: _replica_assignment,
    F._leader_endpoint: _leader_endpoint,
    F._ident_other: _ident_other,
}
_BY_CLASS: dict[type, Callable] = {
    F._int: _int,
    F._str: _str,
    F._int_list: _int_list,
    F._attr: _attr,
    F._flag: _flag,
    F._attr_unwrapped: _attr_unwrapped,
}
# Converters of composite texts (several regex passes per text, each text converted once)
_COMPOSITE_CLASS: dict[type, Callable] = {F._broker_record: _broker_record}


def _reference_of(name: str) -> Callable[[str, F.Columns], None] | None:
    """``fields.py``'s converter of field ``name`` (its own function under a ``_memo``)."""
    converter = F.FIELDS.get(name)
    if converter is None:
        return None
    return converter.convert if isinstance(converter, F._memo) else converter


def columnar_converter(name: str) -> Callable[[pl.Series], Conversion] | None:
    """The column-wise form of field ``name`` (None: rows with it are converted by fields.py)."""
    reference = _reference_of(name)
    if reference is None:
        return None
    make = _BY_CLASS.get(type(reference))
    if make is not None:
        return make(reference)
    make = _COMPOSITE_CLASS.get(type(reference))
    found = make(reference) if make is not None else _BY_FUNCTION.get(reference)
    return _each_text_once(reference, found) if found is not None else None


def _each_text_once(
    reference: Callable[[str, F.Columns], None], convert: Callable[[pl.Series], Conversion]
) -> Callable[[pl.Series], Conversion]:
    """For the composite values (they repeat: one state sent to every broker, as ``fields._memo``
    says, one thread's identity on each of its lines): convert each distinct text once, in order
    of first appearance, and give every row its text's result. Same results: each converter decides a text by the distinct texts alone.
    A few distinct texts are converted by ``fields.py`` itself (``_by_reference``): fewer calls
    than the column-wise form's fixed number of Polars queries per key and text shape."""

    def run(texts: pl.Series) -> Conversion:
        encoded = pc.dictionary_encode(texts.to_arrow())  # codes in order of first appearance
        if 2 * len(encoded.dictionary) > len(texts):
            return convert(texts)
        distinct = pl.Series(encoded.dictionary).cast(pl.String)
        out = (len(distinct) <= FEW_TEXTS and _by_reference(reference, distinct)) or convert(distinct)
        results = pl.DataFrame({str(k): v for k, v in enumerate([*out.columns.values(), *(v for _, v in out.attrs)])})
        index = encoded.indices  # null where a row has no text: no value there
        rows = results.select(pl.all().gather(pl.Series(index))) if results.width else results
        at = index.fill_null(len(distinct)).to_numpy()
        given = rows.get_columns()
        return Conversion(
            columns=dict(zip(out.columns, given)),
            attrs=list(zip((key for key, _ in out.attrs), given[len(out.columns) :])),
            fallback=np.append(out.fallback, False)[at] if out.fallback is not None else None,
        )

    return run


FEW_TEXTS = 64  # distinct texts converted one by one by fields.py (``_each_text_once``)


def text_by_text(name: str, texts: pl.Series) -> Conversion | None:
    """Field ``name`` converted by ``fields.py`` itself, one text at a time: for a field on a few rows
    of a block (the column-wise form's fixed cost, a few Polars queries, exceeds a few calls), or one
    with no column-wise form. None: its rows go to the reference (``_by_reference``)."""
    reference = _reference_of(name)
    return _by_reference(reference, texts) if reference is not None else None


def _by_reference(reference: Callable[[str, F.Columns], None], texts: pl.Series) -> Conversion | None:
    """``fields.py``'s own conversion of each text, as columns (None: its results do not fit one
    Conversion: attribute keys in orders no single order suits, a value the column type rejects).
    A null text is a row without the field: nothing is written there."""
    results: list[F.Columns | None] = []
    for text in texts.to_list():
        columns: F.Columns = {}
        if text is None:
            results.append(columns)
            continue
        try:
            reference(text, columns)
        except Exception:  # that row is the reference's to build (and to report)
            results.append(None)
            continue
        results.append(columns)
    out = Conversion(fallback=np.array([r is None for r in results], bool))
    written = [r or {} for r in results]
    orders = {tuple((r.get("attrs") or {}).keys()) for r in written}
    static = _static_order(orders)
    if static is None:
        return None
    names = dict.fromkeys(name for r in written for name in r if name != "attrs")
    try:
        for name in names:
            out.columns[name] = pl.Series(pa.array([r.get(name) for r in written], _TYPES[name]))
        for key in static:
            values = [(r.get("attrs") or {}).get(key) for r in written]
            out.attrs.append((key, pl.Series(pa.array(values, pa.string()))))
    except (pa.ArrowException, KeyError):
        return None
    return out
