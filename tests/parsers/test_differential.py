"""The fast path and plain Lark agree on every field of every line we have.

Corpus: every line of ../shared/real-logs, of sample_logs/, the test lines of kafka_lines.py and
test_parse_robust.py (unknown identity prefixes, control characters, compose prefixes) and
mutations of all of them (truncated, prefixed, garbage, an identity opener no rule completes, a
stray control character) so disagreements on bad input show too. test_parse_properties.py adds
arbitrary header-shaped lines.
"""

from __future__ import annotations

import pytest

from kafka_forensics.core.eras import AUTO, DIALECTS
from kafka_forensics.parsers.fields import apply_fields
from kafka_forensics.parsers.lines import FastLineParser, LarkLineParser
from tests.parsers import test_parse_robust
from tests.support import kafka_lines
from tests.support.paths import REAL_LOGS, REPO


def _corpus() -> list[str]:
    lines: list[str] = []
    files = sorted(REAL_LOGS.glob("*.log")) + sorted((REPO / "sample_logs").rglob("*.log"))
    for path in files:
        lines.extend(path.read_bytes().decode("utf-8").replace("\r\n", "\n").split("\n"))
    for module in (kafka_lines, test_parse_robust):
        for value in vars(module).values():
            if isinstance(value, str) and value.startswith("["):
                lines.append(value)
            elif isinstance(value, list):
                lines.extend(v for v in value if isinstance(v, str))
    return [ln for ln in lines if ln]


def _mutations(lines: list[str]) -> list[str]:
    out = []
    for ln in lines[::7]:
        out.append(ln[: len(ln) // 2])  # truncated mid-line
        out.append("kafka-1  | " + ln)  # docker compose prefix
        out.append(ln.replace("]", "", 1))  # broken header
        out.append(ln + " trailing")  # junk after the logger
        out.append(ln.replace(" (", " ((", 1))
        out.append(
            ln.replace("[Controller id=", "[Controller id=9, targetBrokerId=", 1).replace(
                "[Broker id=", "[Broker id=x", 1
            )
        )
        out.append(ln[: len(ln) // 3] + "\x0b" + ln[len(ln) // 3 :])  # a stray control character
        out.append(test_parse_robust.COMPOSE + ln)
    return out


CORPUS = _corpus()
MUTATED = _mutations(CORPUS)


def test_corpus_is_the_real_one():
    assert len(CORPUS) > 1000, "real-log corpus not found next to the repository"


@pytest.mark.parametrize("dialect", [AUTO] + [d.name for d in DIALECTS])
def test_fast_path_equals_lark_on_every_line(dialect):
    lark, fast = LarkLineParser(dialect), FastLineParser(dialect)
    mismatches = []
    for text in CORPUS + MUTATED:
        a, b = lark.classify(text), fast.classify(text)
        if a.key() != b.key() or apply_fields(a.fields) != apply_fields(b.fields):
            mismatches.append((text[:160], a.key()[5:8], b.key()[5:8]))
    assert not mismatches, f"{len(mismatches)} lines differ, first: {mismatches[:3]}"


def test_the_differential_test_can_fail():
    """A fast grammar that forgot a template must be caught by the comparison above."""
    lark = LarkLineParser(AUTO)
    fast = FastLineParser(AUTO)
    typed = next(t for t in CORPUS if lark.classify(t).template)
    broken = FastLineParser(AUTO)
    broken.grammars = [g.__class__(**{**g.__dict__, "buckets": {}, "generic": None}) for g in fast.grammars]
    broken.primary = broken.grammars[0]
    assert lark.classify(typed).key() != broken.classify(typed).key()
