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


def _collected(prefix_of: dict[str, str]) -> bytes:
    """Real logs as an operator collects them through tooling that prefixes every physical line:
    ``docker compose logs`` ("<service>-<n>  | ", each service's lines interleaved with the others',
    a record with its stack trace together) or grep over several files ("<path>:"). The logs chosen
    have stack traces, so prefixed continuation lines follow prefixed records."""
    units: list[list[bytes]] = []
    for name, prefix in prefix_of.items():
        lines = (REAL_LOGS / name).read_bytes().decode("utf-8").splitlines()
        mine: list[list[bytes]] = []
        for line in lines:
            text = (prefix + line).encode()
            if line.startswith("[") or not mine:
                mine.append([text])
            else:
                mine[-1].append(text)
        units.append(mine)
    out: list[bytes] = []
    for k in range(max(len(u) for u in units)):  # one record of each service in turn
        for mine in units:
            if k < len(mine):
                out.extend(mine[k])
    return b"\n".join(out) + b"\n"


COLLECTED = {
    "docker compose": {
        "08-danisharora-0.9.0.0-controller-broker-failure.log": "kafka-1  | ",
        "29-atcp-2.1.1-controller-session-expired-reelect.log": "kafka-2  | ",
        "52-tushar-3.8.0-state-change-controlled-shutdown-election-failed.log": "kafka_3   | ",
    },
    "grep": {
        "04-akshaynayak-0.8.2.2-controller-zk-expiry-npe.log": "kafka1/controller.log:",
        "28-choopong-1.1.0-state-change-election-failed.log": "kafka2/state-change.log.1:",
    },
}


@pytest.mark.parametrize("tool", COLLECTED)
def test_logs_collected_through_docker_compose_or_grep_are_read_column_wise(tool, mode, monkeypatch):
    """Every line carries a tooling prefix (header.lark ``line_prefix``): the rows, the line prefix and the
    broker it names, the stack traces attached through it, all equal ``parse_file``'s and plain Lark's. The
    records are read column-wise (``ColumnarPlan.prefixed``), not one by one by the reference, and they
    end blocks: a log collected this way is the common case, not an exception."""
    built_by_reference: list[int] = []
    finish = columnar._Block._finish

    def spy(self, table, last_ts):
        built_by_reference.append(len(self.reference_rows))
        return finish(self, table, last_ts)

    monkeypatch.setattr(columnar._Block, "_finish", spy)
    data = _collected(COLLECTED[tool])
    assert_same(data, f"collected/{tool}.log", lark=mode == "all_columnar")
    rows = parse_file_columnar(data, f"collected/{tool}.log", row_by_row_below=0).events
    prefixes = set(rows.column("line_prefix").to_pylist())
    assert prefixes == set(COLLECTED[tool].values())
    assert rows.column("n_continuation").to_numpy().sum() > 0  # stack lines reached their records
    if mode == "defaults":
        assert sum(built_by_reference) == 0
    if mode == "small_blocks":  # its records end blocks too (record_boundary), so a block's memory stays bounded
        assert len(built_by_reference) >= len(data) // 4096  # two parses of it in 4 KiB blocks (before: one each)


def test_a_tooling_prefix_translates_exactly():
    """``vector_regex``: the header after a tooling prefix has atomic groups and a lookahead
    (``GREP_PREFIX``'s ``:(?=\\[)``). Its translation is exact because the lookahead looks for the
    character the header must start with anyway, and each atomic group's matches end at one place
    (at the first ``|`` or ``[``, which nothing before them can match). On texts built from the
    characters that matter, the translation and Python's pattern match alike and capture the same
    prefix; when an atomic group could end at two places, the translation is only a superset."""
    import itertools
    import re

    import polars as pl

    from kafka_forensics.parsers.vector_regex import translate

    plan = columnar_plan("auto", None)
    assert plan.prefixed is not None and plan.prefixed.before_roles[0] == "prefix"
    grep = re.compile(r"(?P<p>(?:(?>[a-z]*\|\ )|(?>(?:[^\s:\[|]*/)?[\w.-]*\.log(?::\d+)?:(?=\[))))\[")
    vector = translate(grep, anchored=True)
    assert vector.exact
    pieces = ["a", "/", ".log", ":", "1", "|", " ", "["]
    texts = ["".join(p) for n in range(1, 6) for p in itertools.product(pieces, repeat=n)]
    found = pl.Series(texts).str.extract(vector.pattern, 1).to_list()
    for text, ours in zip(texts, found):
        m = grep.match(text)
        assert ours == (m.group("p") if m else None), text
    assert not translate(r"(?>[a-z:]*:)\[", anchored=True).exact  # ':' can end it at two places
    assert not translate(r"(?>a*:(?=x))\[", anchored=True).exact  # it looks for what does not follow


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


def _real_messages() -> list[tuple[object, str, str]]:
    """(plan, message after the header, its template or None) of every record line of the real logs."""
    out = []
    for path in sorted(REAL_LOGS.glob("*.log")):
        texts = path.read_text(encoding="utf-8").splitlines()
        options = ParseOptions()
        plan = columnar_plan(file_dialect(options, iter(texts)), options.layout)
        for text in texts:
            parsed = plan.fast.classify(text)
            if parsed.kind == RECORD and parsed.message.isascii():
                out.append((plan, parsed.message, parsed.template))
    return out


def test_a_rejected_candidate_leaves_the_answer_to_the_later_templates_that_share_its_start():
    """``GrammarPlan.after_bucket``: where a message's candidate template (the first whose skeleton it
    starts with) rejects it, the short alternation of the later templates sharing the candidate's start
    gives what the whole bucket's alternation gives (``fastpath.match_template``), on every message of the
    real logs whose candidate is rejected (the mixed-version corpus has thousands)."""
    import re

    checked = 0
    for plan, message, _ in _real_messages():
        ident = plan.fast.primary.ident.match(message)
        rest = message[ident.end() :] if ident else message
        space = rest.find(" ")
        word = rest if space < 0 else rest[:space]
        for grammar in plan.grammars:
            found = re.match(grammar.candidates, digit_runs_as_zero(rest[: 2 * plan.skeleton_chars]))
            if found is None or grammar.word_templates[grammar.first_with_skeleton[found.group()]].regex.match(rest):
                continue
            t = grammar.first_with_skeleton[found.group()]
            if grammar.words[t] != word:
                continue
            bucket = grammar.fast.buckets[word]
            whole = bucket.regex.match(rest)
            after = grammar.after_bucket(t)
            short = after.regex.match(rest) if after is not None else None
            assert (whole is None) == (short is None), rest
            if whole is not None:
                rule, _, numbers = bucket.plan[whole.lastindex]
                assert after.plan[short.lastindex][0] == rule, rest
                assert short.group(*after.plan[short.lastindex][2]) == whole.group(*numbers) if numbers else True
            checked += 1
    assert checked > 100  # 181 distinct rejected candidates in the real logs today


def test_a_lookahead_at_a_fixed_start_translates_exactly_but_for_its_exclusion():
    """``vector_regex.translate``: ``OTHER_IDENT`` (``\\[(?!Controller id=...)[^\\]]*\\]``, header.lark)
    has a negative lookahead right after its literal ``[``. Column-wise, its translation without the
    lookahead and not matching ``excluded`` must accept exactly the messages Python's branch accepts, with the
    same text, on every record of the real logs. A lookahead inside an alternation stays a plain superset."""
    import polars as pl

    from kafka_forensics.parsers.vector_regex import translate

    plan, *_ = _real_messages()[0]
    branch = plan.ident[-1]
    assert branch.roles == ("ident_other",) and branch.vector.excluded is not None
    python = plan.fast.primary.ident  # the branches' alternation; the last group is the last branch's marker
    real = sorted({m for _, m, _ in _real_messages()})
    # and each real message with a bracketed prefix, that prefix made one the lookahead refuses
    refused = [
        "[" + prefix + m[1:]
        for m in real
        if m.startswith("[")
        for prefix in ("Topic=", "Controller 7]: ", "Broker id=7] ")
    ]
    messages = pl.Series(real + refused)
    earlier = pl.DataFrame([messages.str.contains(b.vector.pattern) for b in plan.ident[:-1]]).max_horizontal()
    accepted = messages.str.contains(branch.vector.pattern) & ~messages.str.contains(branch.vector.excluded)
    texts = messages.str.extract(branch.vector.pattern, 1)
    hits = 0
    for message, before, ok, text in zip(messages, earlier, accepted, texts):
        if before:
            continue  # an earlier branch takes it (those are exact on their own)
        m = python.match(message)
        assert ok == (m is not None and m.lastindex == python.groups), message
        if ok:
            assert text == m.group(python.groups - 1), message
            hits += 1
    assert hits > 100
    assert not accepted.tail(len(refused)).filter(~earlier.tail(len(refused))).any()
    assert translate(r"(?:a|\[(?!x))b", anchored=True).excluded is None
    assert translate(r"\d+(?!x)b", anchored=True).excluded is None
    assert translate(r"\[(?!x)b", anchored=False).excluded is None
