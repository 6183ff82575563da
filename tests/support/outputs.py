"""An analyze output directory in a canonical form, to compare two runs of the same input.

Tables are read with pyarrow (not Spark): the Arrow schema as written, and every row as canonical
JSON, sorted, so the number and order of part files (which depend on the cluster's parallelism)
do not matter but every value and every column type does. ``findings.jsonl`` is compared as
bytes. ``verdict.json`` without what names the run rather than the incident (its paths and
software versions).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds

from kafka_forensics.core.tables import TABLES

RUN_SPECIFIC_VERDICT_KEYS = ("out_dir", "outputs", "versions")


def _plain(value):
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        # map columns come back as lists of (key, value) pairs
        return [_plain(v) for v in value]
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


def table(out: Path, name: str) -> tuple[str, list[str]]:
    """(Arrow schema as text, sorted canonical rows) of one table directory.

    Column names and types, not their nullability: Spark's writer records in the footer the nullability
    it infers for each column (a column computed by an expression that cannot be null is stored "not
    null"), the driver engine (``jobs/local_tables.py``) stores every column nullable, and no reader
    relies on it (the jobs read every table with its declared schema, ``jobs/stored_tables.py``)."""
    data = ds.dataset(out / name, format="parquet", exclude_invalid_files=True).to_table()
    rows = sorted(json.dumps(_plain(r), sort_keys=True, ensure_ascii=False) for r in data.to_pylist())
    schema = pa.schema([f.with_nullable(True) for f in data.schema.remove_metadata()])
    return schema.to_string(), rows


def canonical(out: Path) -> dict:
    """Everything an analyze run leaves that must not depend on where it ran."""
    verdict = json.loads((out / "verdict.json").read_text(encoding="utf-8"))
    for key in RUN_SPECIFIC_VERDICT_KEYS:
        verdict.pop(key, None)
    return {
        "tables": {name: table(out, name) for name in TABLES},
        "findings.jsonl": (out / "findings.jsonl").read_bytes(),
        "verdict": verdict,
    }
