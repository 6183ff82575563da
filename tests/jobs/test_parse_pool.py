"""The driver engine's parse in a pool of processes (``jobs/parse_pool.py``) leaves the serial parse's tables.

The pool is forced by the gate's parameter (``pool_min_seconds=0``) and the serial parse by an infinite
one. The inputs are recorded incidents (plain files and .gz) and one file that the
pool cuts in many byte-range splits: the bundled sample's three state-change logs one after another, in a
directory that names no broker, so time jumps back at each boundary and later splits must learn of earlier
ones' latest timestamp (``local_splits.settle``), as the Spark job settles them.
"""

from __future__ import annotations

import json

import pyarrow.dataset as ds
import pytest

from kafka_forensics.core.errors import LayoutError
from kafka_forensics.jobs import parse_pool
from kafka_forensics.jobs.discovery import discover
from kafka_forensics.jobs.parse_driver import parse_in_driver, path_of
from kafka_forensics.parsers.columnar import ROW_BY_ROW_BELOW
from kafka_forensics.parsers.records import ParseOptions
from tests.support.outputs import table
from tests.support.paths import SAMPLES

SERIAL, POOL = float("inf"), 0.0
BUNDLED = SAMPLES / "kafka-2.4-controller-failover"


def _stored(out, name: str):
    return ds.dataset(out / name, format="parquet", exclude_invalid_files=True).to_table()


def _summary(out) -> dict:
    summary = json.loads((out / "parse_summary.json").read_text(encoding="utf-8"))
    summary.pop("out_dir")
    return summary


def test_the_pool_leaves_the_serial_parses_tables(tmp_path):
    concatenated = tmp_path / "all" / "state-change.log"
    concatenated.parent.mkdir()
    concatenated.write_bytes(b"".join((BUNDLED / f"broker-{n}" / "state-change.log").read_bytes() for n in (1, 2, 3)))
    gzipped = SAMPLES / "real-2.4-zk-controller-kill" / "broker-1" / "state-change.log.gz"
    inputs = [str(BUNDLED), str(gzipped), str(concatenated.parent)]
    paths = [path_of(f.uri) for f in discover(None, inputs)]
    assert parse_pool.pool_workers(paths, ROW_BY_ROW_BELOW, POOL) > 1  # this machine runs the pool at all

    serial = parse_in_driver(inputs, str(tmp_path / "serial"), ParseOptions(), pool_min_seconds=SERIAL)
    pooled = parse_in_driver(inputs, str(tmp_path / "pool"), ParseOptions(), pool_min_seconds=POOL, split_bytes=8 << 10)

    by_serial, by_pool = tmp_path / "serial", tmp_path / "pool"
    # the concatenation was really cut in splits (13 of 8 KiB), and the settling had work to do
    assert len(list((by_pool / "events").glob("part-*.parquet"))) > len(list((by_serial / "events").glob("*.parquet")))
    assert serial.out_of_order > 0 and any(f["source_file"].endswith(".gz") for f in serial.files)
    assert table(by_pool, "events") == table(by_serial, "events")
    for name in ("quarantine", "files"):  # the same rows in the same order
        assert _stored(by_pool, name).equals(_stored(by_serial, name)), name
    assert _summary(by_pool) == _summary(by_serial)
    assert pooled.reconciled


def test_a_workers_error_is_the_serial_parses_error(tmp_path):
    """A --layout the header grammar cannot follow fails in the worker that builds the parser: the same
    exception type and sentence reach the caller (and so the same exit code through the CLI)."""
    options = ParseOptions(layout="%d %p %c %m %n %q")
    with pytest.raises(LayoutError) as serial:
        parse_in_driver([str(BUNDLED)], str(tmp_path / "serial"), options, pool_min_seconds=SERIAL)
    with pytest.raises(LayoutError) as pooled:
        parse_in_driver([str(BUNDLED)], str(tmp_path / "pool"), options, pool_min_seconds=POOL)
    assert str(pooled.value) == str(serial.value)
    assert type(pooled.value.__cause__).__name__ == "_RemoteTraceback"  # it was raised in a worker


def test_the_gate_keeps_the_bundled_sample_serial_and_pools_the_recorded_incidents():
    """The bundled sample (584 lines) is parsed in this process; all of sample_logs/ (511 files, 138,449 lines,
    about 9 s of serial parsing) in the pool. Estimated from the files' lines, not timed."""

    def paths(root):
        return [path_of(f.uri) for f in discover(None, [str(root)])]

    assert parse_pool.pool_workers(paths(BUNDLED), ROW_BY_ROW_BELOW) == 1
    assert parse_pool.estimated_parse_seconds(paths(BUNDLED), ROW_BY_ROW_BELOW) < 0.1
    assert parse_pool.pool_workers(paths(SAMPLES), ROW_BY_ROW_BELOW) == parse_pool.cores()
