"""Census of findings: by rule and severity, and how many episodes, on every input we can judge.

For each input (a bundled sample, one file of the real-log corpus, a recorded lab incident) it
parses and replays in one Python process (``parse_file`` + ``replay_all``, the twins of the Spark
jobs) and prints one row per input: the number of findings (each finding is one episode: one
anomaly of one rule on one partition or cluster), the evidence lines they cite, and the count per
``rule:severity``. Where the input has a ground truth it is judged too:

- simulated samples (``truth.json`` with ``findings``): the expected findings no row reports;
- lab recordings (``truth.json`` with ``must``/``must_not``, ``lab/truth.py``): every ``must`` is
  matched by a finding of any severity, a ``must_not`` is violated by a finding of severity
  warning or worse (``info`` never violates), ``may`` is allowed either way.

    python bench/findings_census.py                          # samples + ../shared/real-logs
    python bench/findings_census.py ../wt-lab/sample_logs/real-*   # recorded incidents too
    python bench/findings_census.py --json OUT.json ...      # the rows, to compare two runs
    python bench/findings_census.py --compare BEFORE.json ...  # a Markdown before/after table

It never times anything (the numbers are counts, the same on every machine).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections import Counter
from pathlib import Path

from kafka_forensics.parsers.records import parse_file
from kafka_forensics.replay.findings import SEVERITIES
from kafka_forensics.replay.local import replay_all

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "sample_logs"
REAL_LOGS = REPO.parent / "shared" / "real-logs"
LOG_SUFFIXES = (".log", ".dump", ".gz")
LOUD = set(SEVERITIES[: SEVERITIES.index("info")])


def _files(folder: Path, truth: dict | None) -> list[Path]:
    if truth and truth.get("files"):
        return [folder / f for f in truth["files"]]
    return sorted(p for p in folder.rglob("*") if p.is_file() and (p.name.endswith(LOG_SUFFIXES) or ".log" in p.name))


def _events(root: Path, files: list[Path]) -> list[dict]:
    events = []
    for path in files:
        rel = str(path.relative_to(root)) if path.is_relative_to(root) else path.name
        for e in parse_file(path.read_bytes(), rel).events:
            e = dict(e)
            if e["ts"] is not None:
                e["ts"] = dt.datetime.fromtimestamp(e["ts"] / 1e6, dt.timezone.utc)
            e["attrs"] = dict(e.get("attrs") or {})
            events.append(e)
    return events


def _matches(expected: dict, row: dict) -> bool:
    if row["rule"] != expected["rule"]:
        return False
    return all(expected.get(k) is None or row.get(k) == expected[k] for k in ("topic", "partition"))


def judge(truth: dict | None, rows: list[dict]) -> dict:
    if not truth:
        return {}
    if "must" in truth:  # a lab recording
        missing = [e for e in truth["must"] if not any(_matches(e, r) for r in rows)]
        violations = [
            r
            for r in rows
            if r["severity"] in LOUD
            and not any(_matches(e, r) for e in truth.get("may", []))
            and any(_matches(e, r) for e in truth["must_not"])
        ]
        return {
            "must": len(truth["must"]),
            "must_found": len(truth["must"]) - len(missing),
            "missing": [f"{e['rule']} {e['topic']}-{e['partition']}" for e in missing],
            "violations": sorted(f"{r['rule']}:{r['severity']} {r['topic']}-{r['partition']}" for r in violations),
        }
    from kafka_forensics.simulator.truth import unmatched

    missing = unmatched(truth.get("findings", []), rows)
    return {
        "must": len(truth.get("findings", [])),
        "must_found": len(truth.get("findings", [])) - len(missing),
        "missing": [f"{e['rule']} {e['topic']}-{e['partition']}" for e in missing],
        "violations": [],
    }


def census(name: str, root: Path, files: list[Path], truth: dict | None) -> dict:
    rows = [f.to_row() for f in replay_all(_events(root, files)).findings]
    by = Counter(f"{r['rule']}:{r['severity']}" for r in rows)
    return {
        "input": name,
        "episodes": len(rows),
        "evidence_lines": sum(r["evidence_count"] for r in rows),
        "loud": sum(1 for r in rows if r["severity"] in LOUD),
        "by_rule": dict(sorted(by.items())),
        "truth": judge(truth, rows),
    }


def inputs(args: list[str]) -> list[tuple[str, Path, list[Path], dict | None]]:
    out = []
    folders = [Path(a) for a in args] if args else sorted(p for p in SAMPLES.iterdir() if p.is_dir())
    for folder in folders:
        truth_path = folder / "truth.json"
        truth = json.loads(truth_path.read_text()) if truth_path.is_file() else None
        out.append((folder.name, folder, _files(folder, truth), truth))
    if not args and REAL_LOGS.is_dir():
        for path in sorted(REAL_LOGS.glob("*.log")):
            out.append((f"real-logs/{path.name}", REAL_LOGS, [path], None))
    return out


def _cell(row: dict | None) -> str:
    if row is None:
        return "-"
    by = ", ".join(f"{k} {v}" for k, v in row["by_rule"].items()) or "none"
    t = row["truth"]
    verdict = ""
    if t:
        verdict = f"; truth {t['must_found']}/{t['must']}" + (
            f", {len(t['violations'])} must-not" if t["violations"] else ""
        )
    return f"{row['episodes']} ({row['loud']} above info): {by}{verdict}"


def compare(before: list[dict], after: list[dict]) -> str:
    """A Markdown table: per input, findings before and episodes after, by rule:severity."""
    old = {r["input"]: r for r in before}
    lines = ["| input | before: findings | after: episodes |", "|---|---|---|"]
    for r in after:
        b = old.get(r["input"])
        if b is not None and b["by_rule"] == r["by_rule"] and b["truth"] == r["truth"]:
            continue  # unchanged
        lines.append(f"| {r['input']} | {_cell(b)} | {_cell(r)} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("inputs", nargs="*", help="incident folders (default: sample_logs/* and ../shared/real-logs)")
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--compare", help="a --json file of an earlier run: print a before/after table of what changed")
    args = ap.parse_args()
    rows = [census(*i) for i in inputs(args.inputs)]
    if args.compare:
        print(compare(json.loads(Path(args.compare).read_text()), rows))
        print()
    total = Counter()
    for r in rows:
        total.update(r["by_rule"])
        t = r["truth"]
        verdict = ""
        if t:
            verdict = f" | truth {t['must_found']}/{t['must']}"
            if t["missing"]:
                verdict += f" missing {t['missing']}"
            if t["violations"]:
                verdict += f" VIOLATIONS {t['violations']}"
        by = ", ".join(f"{k}={v}" for k, v in r["by_rule"].items()) or "-"
        print(
            f"{r['input']}: {r['episodes']} episodes ({r['loud']} above info), {r['evidence_lines']} lines | {by}{verdict}"
        )
    print(
        f"TOTAL {len(rows)} inputs: {sum(r['episodes'] for r in rows)} episodes "
        f"({sum(r['loud'] for r in rows)} above info), {sum(r['evidence_lines'] for r in rows)} evidence lines"
    )
    for key, n in sorted(total.items()):
        print(f"  {key}: {n}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
