"""Shared helpers for the simulator tests (no tests here): run scenarios once per session, parse, replay."""

from __future__ import annotations

import atexit
import functools
import json
import re
import shutil
import tempfile
from pathlib import Path

from kafka_forensics.parsers.records import parse_file
from kafka_forensics.simulator.scenarios import SCENARIOS, run_scenario
from tests.support.paths import SAMPLES

_ROOT = Path(tempfile.mkdtemp(prefix="kf-sim-tests-"))
atexit.register(shutil.rmtree, _ROOT, True)

# (scenario, version) pairs: every scenario on every release it supports, plus TRACE runs of the
# INFO-level releases (2.8, 3.6, 3.9) for the scenarios with the most line shapes.
CASES = [(s, v, False) for s in SCENARIOS for v in SCENARIOS[s].versions]
CASES += [(s, v, True) for s in ("lifecycle", "zombie-controller", "unclean-election") for v in ("2.8", "3.6")]
CASES += [("lifecycle", "3.9-kraft", True)]

# Lines whose Kafka text the project's grammar does not type yet (each one is reported, not hidden):
KNOWN_GRAMMAR_GAPS: set[tuple[str, str]] = set()

# Scenarios with no fault: the replay must report nothing above "info".
CLEAN = ("clean-failover", "lifecycle", "topic-deletion-stuck", "skew-and-shared-file", "reassignment")


def case_id(case) -> str:
    s, v, trace = case
    return f"{s}@{v}{'-trace' if trace else ''}"


@functools.lru_cache(maxsize=None)
def simulated(scenario: str, version: str, trace: bool = False, seed: int = 7, gzip: bool = False):
    """Run a scenario once per test session (with the expected-event manifest)."""
    out = _ROOT / f"{scenario}-{version}-{int(trace)}-{seed}-{int(gzip)}"
    return run_scenario(scenario, version, out, seed=seed, trace=trace, gzip=gzip, expect=True)


def parse_dir(root: Path, files) -> dict:
    """``{file: FileResult}`` for every log file (parse_file reads .gz by content)."""
    return {f: parse_file((Path(root) / f).read_bytes(), f) for f in files}


def replay_rows(root: Path, files) -> list[dict]:
    """Parse, then the in-process replay (``replay.local``, the twin of jobs/replay_job)."""
    from kafka_forensics.replay.local import replay_all, replay_event

    events = []
    for result in parse_dir(root, files).values():
        for e in result.events:
            events.append(replay_event(e))
    return [f.to_row() for f in replay_all(events).findings]


def sample_dirs() -> list[Path]:
    return sorted(p for p in SAMPLES.glob("sim-*") if (p / "truth.json").is_file())


def load(path: Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def mentions(topic: str, partition: int) -> re.Pattern:
    t = re.escape(topic)
    return re.compile(
        rf"(?<![\w.-]){t}-{partition}(?!\d)|\[{t},{partition}\]|topicName='{t}', partitionIndex={partition},"
        rf"|topicId \S+, partition {partition} "
    )
