"""The columnar parse (parsers/columnar.py) gives exactly parse_file's rows: every column of every
row, the quarantine rows and the file summary, on every corpus we have.

Corpora: every file of ../shared/real-logs, of sample_logs/ (the bundled incident, the simulator's
samples and, once recorded, the lab's real-* incidents), a generated busy 2.4 TRACE log
(bench/generate.py), simulator runs of every scenario on every release, and one file of all the
differential test's lines and mutations. The oracle is parse_file on the fast path (itself equal to
plain Lark line by line, test_differential.py) and, on the real and bundled logs, parse_file on
plain Lark itself.

The columnar parse hands some rows to the reference code on purpose (fields with no column-wise
converter or on few rows, texts a converter is unsure of, a template shape whose field order
contradicts another's): the tests force the column-wise code onto every row it can take
(``all_columnar``), run it with its defaults, and in small blocks, so both paths and the block
boundaries are compared.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow as pa
import pytest

from kafka_forensics.core.tables import EVENTS_SCHEMA
from kafka_forensics.parsers import columnar, columnar_assembly, columnar_fields, columnar_reader
from kafka_forensics.parsers.columnar import parse_file_columnar
from kafka_forensics.parsers.columnar_plan import columnar_plan, digit_runs_as_zero
from kafka_forensics.parsers.lines import RECORD
from kafka_forensics.parsers.records import ParseOptions, file_dialect, parse_file
from tests.parsers.test_differential import CORPUS, MUTATED
from tests.support.paths import REAL_LOGS, REPO, SAMPLES
from tests.support.simulator import CASES, case_id, simulated

sys.path.insert(0, str(REPO / "bench"))
from generate import generate_lines


@pytest.fixture(params=["defaults", "all_columnar", "small_blocks"])
def mode(request, monkeypatch):
    """Strict (an error is raised, not hidden by the block fallback), in three settings."""
    monkeypatch.setattr(columnar, "STRICT", True)
    if request.param == "all_columnar":
        monkeypatch.setattr(columnar, "SMALL", 0)
        monkeypatch.setattr(columnar_assembly, "FEW_ROWS", 0)
        monkeypatch.setattr(columnar_fields, "FEW_TEXTS", 0)
    if request.param == "small_blocks":  # and the lines copied into a plain string column (blocks over 2 GiB)
        monkeypatch.setattr(columnar, "BLOCK_BYTES", 4096)
        monkeypatch.setattr(columnar_reader, "_VIEW_BYTES", 0)
    return request.param


def _rows(result_rows: list[list]) -> list[dict]:
    if not result_rows:
        return []
    columns = list(zip(*result_rows))
    table = pa.Table.from_arrays([pa.array(c, f.type) for c, f in zip(columns, EVENTS_SCHEMA)], schema=EVENTS_SCHEMA)
    return table.to_pylist()


def assert_same(data: bytes, name: str, options: ParseOptions | None = None, lark: bool = False) -> None:
    options = options or ParseOptions()
    got = parse_file_columnar(data, name, options, row_by_row_below=0)  # column-wise at any size
    oracles = [parse_file(data, name, options)]
    if lark:
        oracles.append(parse_file(data, name, ParseOptions(**{**options.__dict__, "use_lark": True})))
    ours = got.events.to_pylist()
    for want in oracles:
        theirs = _rows(want.rows)
        assert len(ours) == len(theirs), name
        for a, b in zip(ours, theirs):
            assert a == b, (name, a["line_no"], {k: (a[k], b[k]) for k in a if a[k] != b[k]})
        assert got.quarantine == want.quarantine, name
        assert got.summary == want.summary, name


def _files() -> list[Path]:
    return sorted(REAL_LOGS.glob("*.log")) + sorted(SAMPLES.rglob("*.log"))


def test_every_real_and_bundled_log_against_parse_file_and_plain_lark(mode):
    files = _files()
    assert len(files) > 100
    for path in files:
        assert_same(path.read_bytes(), str(path.relative_to(REPO.parent)), lark=mode == "all_columnar")


def test_the_generated_busy_log(mode):
    # 4 KiB blocks only test the seams between blocks: 3,000 lines give ~180 of them (30,000: ~1,800 and
    # the slowest test of the suite); the other modes keep the whole busy log
    data = ("\n".join(generate_lines(3_000 if mode == "small_blocks" else 30_000)) + "\n").encode()
    assert_same(data, "broker-1/state-change.log", ParseOptions(kafka_version="2.4"))
    assert_same(data, "state-change.log")  # dialect detected, no broker in the path: the owner fills


def test_every_line_and_mutation_of_the_differential_test_as_one_file(mode):
    data = ("\n".join(CORPUS + MUTATED) + "\n").encode()
    assert_same(data, "mixed/controller.log")
    assert_same(data.replace(b"\n", b"\r\n"), "mixed/controller.log")


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_every_simulated_scenario(case, monkeypatch):
    monkeypatch.setattr(columnar, "STRICT", True)
    monkeypatch.setattr(columnar_assembly, "FEW_ROWS", 0)
    monkeypatch.setattr(columnar_fields, "FEW_TEXTS", 0)
    result = simulated(*case)
    for name in result.files:
        assert_same((Path(result.out_dir) / name).read_bytes(), name)


def test_the_comparison_can_fail(monkeypatch):
    """A column-wise converter that reads a field wrong is caught."""
    wrong = columnar_fields._topic_partition

    def off_by_one(texts):
        out = wrong(texts)
        out.columns["partition"] = out.columns["partition"] + 1
        return out

    monkeypatch.setitem(columnar_fields._BY_FUNCTION, columnar_fields.F._topic_partition, off_by_one)
    monkeypatch.setattr(columnar_assembly, "FEW_ROWS", 0)
    monkeypatch.setattr(columnar_fields, "FEW_TEXTS", 0)
    data = ("\n".join(generate_lines(2_000)) + "\n").encode()
    with pytest.raises(AssertionError):
        assert_same(data, "broker-1/state-change.log", ParseOptions(kafka_version="2.4"))


def test_every_typed_real_message_starts_with_a_skeleton_of_its_template():
    """A template's skeletons (columnar_plan.skeletons) are a necessary condition: the column-wise
    parse gives a message no candidate, or a later one, when its digit-collapsed text starts with
    none of them. Every message of the real logs the fast path types must start with one of its
    template's skeletons (in the grammar that typed it: the dialect's, else the all-eras retry)."""
    checked = 0
    for path in sorted(REAL_LOGS.glob("*.log")):
        texts = path.read_text(encoding="utf-8").splitlines()
        options = ParseOptions()
        plan = columnar_plan(file_dialect(options, iter(texts)), options.layout)
        fast = plan.fast
        for text in texts:
            parsed = fast.classify(text)
            if parsed.kind != RECORD or parsed.template is None:
                continue
            ident = fast.primary.ident.match(parsed.message)
            rest = digit_runs_as_zero(parsed.message[ident.end() :] if ident else parsed.message)
            skeletons = [
                t.skeletons
                for grammar in plan.grammars
                for t in grammar.word_templates + grammar.generic_templates
                if t.rule == parsed.template
            ]
            assert any(rest.startswith(s) for found in skeletons for s in found), (path.name, text)
            checked += 1
    assert checked > 500  # 975 typed messages in the real logs today
