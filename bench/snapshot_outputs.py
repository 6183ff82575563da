"""Canonical dump of what the pipeline produces, to prove a refactor changed no behaviour.

``record DIR`` parses and replays, in one Python process (``parse_file`` + ``replay_all``, the
twins of the Spark jobs), every bundled sample (``sample_logs/*``) and every file of the real-log
corpus (``../shared/real-logs``), and writes one canonical JSON file per input: the events (every
column), quarantine rows, per-file summaries, the replay's controllers, brokers, broker versions,
partition and replica timelines, and the findings (``Finding.to_row``). Each input is replayed
as detected and, for the samples, once more with every ``--kafka-version`` in ``VERSION_RUNS``.

``--spark`` also runs ``kafka-forensics analyze`` (one local Spark session) on every sample and
dumps its tables, ``findings.jsonl`` and ``verdict.json`` (without the timing/version fields).

``compare A B`` diffs two dumps file by file and exits 1 if anything differs.

    python bench/snapshot_outputs.py record /tmp/before   # on the old commit
    python bench/snapshot_outputs.py record /tmp/after    # on the new one
    python bench/snapshot_outputs.py compare /tmp/before /tmp/after
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import hashlib
import json
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "sample_logs"
REAL_LOGS = REPO.parent / "shared" / "real-logs"
LOG_SUFFIXES = (".log", ".dump", ".gz")
# --kafka-version values every sample is also replayed with (the texts all releases agree on).
VERSION_RUNS = ("0.10.2", "1.1", "2.4.1", "2.8", "3.6", "3.9-kraft", "4.0")
VOLATILE_VERDICT_KEYS = ("versions", "timings", "out_dir", "outputs")
ANALYZE_OUT = Path("/tmp/kf-snapshot-analyze")  # the same in every run (see _record_spark)


def _canonical(value):
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_canonical(v) for v in value), key=repr)
    if isinstance(value, dt.datetime):  # Spark hands back naive datetimes in the session's zone (UTC)
        return (
            (value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)).astimezone(dt.timezone.utc).isoformat()
        )
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _canonical({f.name: getattr(value, f.name) for f in dataclasses.fields(value)})
    if hasattr(value, "tolist"):
        return _canonical(value.tolist())
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)


def _log_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and p.name != "README.md" and p.suffix != ".json")


def _parse(files: list[Path], base: Path, kafka_version: str | None):
    from kafka_forensics.parsers.records import ParseOptions, parse_file

    events, quarantine, summaries = [], [], []
    for path in files:
        rel = str(path.relative_to(base))
        result = parse_file(path.read_bytes(), rel, ParseOptions(kafka_version=kafka_version))
        events.extend(result.events)
        quarantine.extend(result.quarantine)
        summaries.append(result.summary)
    return events, quarantine, summaries


def _replay(events: list[dict], kafka_version: str | None) -> dict:
    from kafka_forensics.replay.local import replay_all, replay_events

    rows = replay_events(events)
    try:
        result = replay_all(rows, user_version=kafka_version)
    except Exception as err:  # a version the replay refuses: the refusal is the behaviour
        return {"error": f"{type(err).__name__}: {err}"}
    contexts = {
        name: {
            "controllers": ctx.controllers,
            "brokers": ctx.brokers,
            "broker_versions": ctx.broker_versions,
            "resets": ctx.resets,
        }
        for name, ctx in result.contexts.items()
    }
    return {
        "contexts": contexts,
        "partition_timeline": result.partition_intervals,
        "replica_timeline": result.replica_intervals,
        "findings": [f.to_row() for f in result.findings],
    }


def _inputs() -> list[tuple[str, list[Path], Path, bool]]:
    out = []
    for sample in sorted(p for p in SAMPLES.iterdir() if p.is_dir()):
        out.append((f"sample-{sample.name}", _log_files(sample), SAMPLES, True))
    for real in sorted(REAL_LOGS.glob("*.log")):
        out.append((f"real-{real.stem}", [real], REAL_LOGS, False))
    return out


def _write(path: Path, doc) -> None:
    path.write_text(json.dumps(_canonical(doc), indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def record(out: Path, spark: bool) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, files, base, is_sample in _inputs():
        for version in (None, *VERSION_RUNS) if is_sample else (None,):
            try:
                events, quarantine, summaries = _parse(files, base, version)
                doc = {
                    "events": events,
                    "quarantine": quarantine,
                    "files": summaries,
                    "replay": _replay(events, version),
                }
            except Exception as err:
                doc = {"error": f"{type(err).__name__}: {err}"}
            _write(out / f"{name}{'@' + version if version else ''}.json", doc)
        print(name, flush=True)
    if spark:
        _record_spark(out)


def _record_spark(out: Path) -> None:
    from click.testing import CliRunner

    from kafka_forensics.cli.main import main
    from kafka_forensics.jobs.spark_session import build_session

    spark = build_session("local[2]", {"spark.sql.shuffle.partitions": "4"})
    tables = (
        "events",
        "quarantine",
        "files",
        "partition_timeline",
        "replica_timeline",
        "controllers",
        "brokers",
        "findings",
    )
    for sample in sorted(p for p in SAMPLES.iterdir() if p.is_dir()):
        # One fixed output path in every run: the report names its directory, so a random one would
        # make the same report hash differently.
        tmp = str(ANALYZE_OUT / sample.name)
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            result = CliRunner().invoke(main, ["analyze", str(sample.relative_to(REPO)), "--out", tmp])
            doc: dict = {"exit_code": result.exit_code}
            for table in tables:
                rows = [_canonical(r.asDict(recursive=True)) for r in spark.read.parquet(f"{tmp}/{table}").collect()]
                doc[table] = sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))
            doc["findings.jsonl"] = (Path(tmp) / "findings.jsonl").read_text(encoding="utf-8").splitlines()
            verdict = json.loads((Path(tmp) / "verdict.json").read_text(encoding="utf-8"))
            for key in VOLATILE_VERDICT_KEYS:
                verdict.pop(key, None)
            doc["verdict"] = verdict
            report = (Path(tmp) / "report.html").read_bytes()
            doc["report_bytes"] = len(report)
            doc["report_sha256"] = hashlib.sha256(report).hexdigest()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        _write(out / f"spark-{sample.name}.json", doc)
        print("spark", sample.name, flush=True)
    spark.stop()


def compare(a: Path, b: Path) -> int:
    names = sorted({p.name for p in a.glob("*.json")} | {p.name for p in b.glob("*.json")})
    differ = 0
    for name in names:
        left, right = a / name, b / name
        if not left.exists() or not right.exists():
            print(f"only in {'B' if not left.exists() else 'A'}: {name}")
            differ += 1
        elif left.read_bytes() != right.read_bytes():
            print(f"differs: {name}")
            differ += 1
    print(f"{len(names)} dumps compared, {differ} differ")
    return 1 if differ else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record")
    rec.add_argument("out", type=Path)
    rec.add_argument("--spark", action="store_true", help="also run `analyze` on every sample (Spark, slow)")
    cmp_ = sub.add_parser("compare")
    cmp_.add_argument("a", type=Path)
    cmp_.add_argument("b", type=Path)
    args = parser.parse_args(argv)
    if args.command == "record":
        record(args.out, args.spark)
        return 0
    return compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
