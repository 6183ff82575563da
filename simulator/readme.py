"""The short README written next to a simulated scenario's logs (deterministic, from truth.json)."""

from __future__ import annotations

import textwrap
from pathlib import Path

README_FILE = "README.md"


def scenario_readme(doc: dict, summary_text: str) -> str:
    """Markdown: what happened, how to regenerate it, what a replay must report and where."""
    cmd = (
        f"kafka-forensics simulate --scenario {doc['scenario']} --kafka-version {doc['kafka_version']} "
        f"--seed {doc['seed']}{' --trace' if doc['trace'] else ''}{' --gzip' if doc['gzip'] else ''} --out DIR"
    )
    lines = [
        f"# {doc['scenario']} (Kafka {doc['kafka_version']}, {doc['mode']})",
        "",
        "**Simulated, not captured from a real cluster**: written by `kafka-forensics simulate` from its own",
        "per-release templates (`simulator/templates_*.py`), driven by the state machines of",
        "`kafka_forensics.statemachines`. The ground truth is in `truth.json`.",
        "",
        textwrap.fill(" ".join(summary_text.split()), 100),
        "",
        f"- brokers {', '.join(map(str, doc['brokers']))}; `state.change.logger` at {doc['state_change_level']}"
        f" ({'forced by --trace' if doc['trace'] else 'the release default'}); {doc['lines']:,} lines in "
        f"{len(doc['files'])} files",
        f"- regenerate byte for byte: `{cmd}`",
        "",
        "## What a replay must report",
        "",
    ]
    if doc["findings"]:
        lines += ["| rule | where | controller epoch | first evidence |", "|---|---|---|---|"]
        for f in doc["findings"]:
            where = "cluster" if f["topic"] is None else f"{f['topic']}-{f['partition']}"
            if f.get("replica") is not None:
                where += f" replica {f['replica']}"
            first = f["evidence"][0] if f["evidence"] else ""
            lines.append(f"| `{f['rule']}` | {where} | {f['controller_epoch']} | `{first}` |")
        lines.append("")
        lines += [f"- {f['note']}" for f in doc["findings"] if f.get("note")]
    else:
        lines.append("Nothing above `info`: this is a healthy cluster (no false positives expected).")
    extra = []
    for d in doc.get("deleted_lines", []):
        extra.append(
            f"- {d['count']} lines removed from `{d['file']}` after line {d['after_line']} "
            "(listed in truth.json `deleted_lines`)"
        )
    for s in doc.get("clock_skew", []):
        extra.append(f"- broker {s['broker']}'s clock is {s['skew_ms']} ms ahead")
    for s in doc.get("shared_files", []):
        extra.append(f"- brokers {', '.join(map(str, s['brokers']))} write one shared `{s['file']}`")
    for e in doc.get("events", []):
        extra.append(f"- {e['what']}")
    if extra:
        lines += ["", "## Also in these logs", "", *extra]
    return "\n".join(lines) + "\n"


def write_readme(root: Path, doc: dict, summary_text: str) -> Path:
    path = Path(root) / README_FILE
    path.write_text(scenario_readme(doc, summary_text), encoding="utf-8")
    return path
