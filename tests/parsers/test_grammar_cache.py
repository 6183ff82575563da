"""Compiled grammars cached per user (parsers/grammar_cache.py, core/user_cache.py): a parser loaded
from the cache is the parser built from the grammar, and nothing unsafe or stale is ever loaded."""

from __future__ import annotations

import os
import stat

import pytest
from lark import Lark

from kafka_forensics.core import user_cache
from kafka_forensics.core.eras import AUTO, DIALECTS
from kafka_forensics.parsers import grammar_cache
from kafka_forensics.parsers.fastpath import compile_fast_grammar
from kafka_forensics.parsers.grammar_loader import grammar_text, templates_for
from kafka_forensics.parsers.lines import LarkLineParser
from tests.support.paths import REPO

OPTIONS = dict(parser="lalr", lexer="contextual", keep_all_tokens=True, maybe_placeholders=False)
SAMPLE_LINES = [
    line
    for path in sorted((REPO / "sample_logs" / "kafka-2.4-controller-failover").rglob("*.log"))
    for line in path.read_text(encoding="utf-8").splitlines()
    if line
]


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv(user_cache.ENV, str(root))
    return root / "grammar"


def _entries(directory):
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


def _patterns(fast) -> list[str]:
    regexes = [*fast.headers, fast.record_start, fast.ident, fast.ident_opener, fast.continuation]
    regexes += [b.regex for b in fast.buckets.values()] + ([fast.generic.regex] if fast.generic else [])
    return [r.pattern for r in regexes]


# auto holds every template of every era; the oldest and the KRaft dialect add their own shells.
@pytest.mark.parametrize("dialect", [AUTO, DIALECTS[0].name, DIALECTS[-1].name])
def test_a_cached_parser_compiles_to_the_same_fast_path_as_a_built_one(cache_dir, dialect):
    record_text = grammar_text(dialect, None, "record")
    continuation_text = grammar_text(AUTO, None, "continuation")
    rules = [t.rule for t in templates_for(dialect)]
    built = compile_fast_grammar(
        Lark(record_text, start="record", **OPTIONS), Lark(continuation_text, start="continuation", **OPTIONS), rules
    )
    grammar_cache.cached_lark(record_text, start="record", **OPTIONS)  # builds and saves
    grammar_cache.cached_lark(continuation_text, start="continuation", **OPTIONS)
    assert len(_entries(cache_dir)) == 2
    loaded = compile_fast_grammar(
        grammar_cache.cached_lark(record_text, start="record", **OPTIONS),
        grammar_cache.cached_lark(continuation_text, start="continuation", **OPTIONS),
        rules,
    )
    assert _patterns(loaded) == _patterns(built)
    assert loaded.ident_roles == built.ident_roles
    assert {w: b.plan for w, b in loaded.buckets.items()} == {w: b.plan for w, b in built.buckets.items()}


def test_a_cached_lark_parser_parses_every_sample_line_as_the_built_one(cache_dir, monkeypatch):
    text = grammar_text("zk-2.4", None, "record")
    built = Lark(text, start="record", **OPTIONS)
    grammar_cache.cached_lark(text, start="record", **OPTIONS)
    loaded = grammar_cache.cached_lark(text, start="record", **OPTIONS)
    assert loaded is not built
    parsed = 0
    for line in SAMPLE_LINES:
        try:
            expected = built.parse(line)
        except Exception as err:  # the loaded parser must refuse the same lines
            with pytest.raises(type(err)):
                loaded.parse(line)
            continue
        assert loaded.parse(line) == expected
        parsed += 1
    assert parsed > 400  # the sample's records, not just its refusals
    # and the reference parser built on top of the cache types the sample as before
    reference = LarkLineParser("zk-2.4")
    assert sum(1 for line in SAMPLE_LINES if reference.classify(line).template) > 400


def test_another_grammar_or_option_never_reads_an_entry_it_was_not_built_from(cache_dir):
    text = grammar_text(AUTO, None, "continuation")
    key = grammar_cache.cache_key(text, {"start": "continuation", **OPTIONS})
    assert key != grammar_cache.cache_key(text + "\n// edited\n", {"start": "continuation", **OPTIONS})
    assert key != grammar_cache.cache_key(text, {"start": "continuation", **OPTIONS, "keep_all_tokens": False})
    grammar_cache.cached_lark(text, start="continuation", **OPTIONS)
    grammar_cache.cached_lark(text + "\nEXTRA: /x/\n", start="continuation", **OPTIONS)
    assert len(_entries(cache_dir)) == 2


def test_a_damaged_entry_is_rebuilt_and_replaced(cache_dir):
    text = grammar_text(AUTO, None, "continuation")
    grammar_cache.cached_lark(text, start="continuation", **OPTIONS)
    [name] = _entries(cache_dir)
    (cache_dir / name).write_bytes(b"\x80\x04 truncated")
    parser = grammar_cache.cached_lark(text, start="continuation", **OPTIONS)
    assert parser.parse("\tat kafka.Foo.bar(Foo.scala:1)")
    assert (cache_dir / name).stat().st_size > 1000 and _entries(cache_dir) == [name]


def test_the_cache_directory_is_private_and_an_unsafe_one_is_not_used(tmp_path, monkeypatch):
    root = tmp_path / "shared"
    monkeypatch.setenv(user_cache.ENV, str(root))
    directory = user_cache.private_dir("grammar")
    assert directory is not None
    assert stat.S_IMODE(os.stat(root).st_mode) == 0o700 == stat.S_IMODE(os.stat(directory).st_mode)
    os.chmod(directory, 0o777)  # anyone could plant a pickle here: refused
    assert user_cache.private_dir("grammar") is None
    text = grammar_text(AUTO, None, "continuation")
    grammar_cache.cached_lark(text, start="continuation", **OPTIONS)
    assert _entries(directory) == []  # built without the cache, nothing written
    os.chmod(directory, 0o700)
    os.chmod(root, 0o755)  # a root other tools of ours share: readable is fine, writable is not
    assert user_cache.private_dir("grammar") == directory
    os.chmod(root, 0o775)
    assert user_cache.private_dir("grammar") is None
    os.chmod(root, 0o700)
    link = tmp_path / "link"
    link.symlink_to(root, target_is_directory=True)
    monkeypatch.setenv(user_cache.ENV, str(link))
    assert user_cache.private_dir("grammar") is None  # the root is a symlink, not a directory of ours


@pytest.mark.parametrize("value", ["off", ""])
def test_caching_can_be_switched_off(tmp_path, monkeypatch, value):
    monkeypatch.setenv(user_cache.ENV, value)
    assert user_cache.private_dir("grammar") is None
    monkeypatch.delenv(user_cache.ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert user_cache.cache_root() == tmp_path / "xdg" / "kafka-forensics"


def test_old_entries_beyond_the_limit_are_dropped(cache_dir, monkeypatch):
    monkeypatch.setattr(user_cache, "MAX_ENTRIES", 2)
    directory = user_cache.private_dir("grammar")
    assert directory == cache_dir
    for number in range(4):
        user_cache.write_entry(directory, f"entry-{number}", b"x")
        os.utime(directory / f"entry-{number}", (number, number))
    assert _entries(directory) == ["entry-2", "entry-3"]
