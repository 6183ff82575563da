"""Assemble the grammar family into one LALR parser per (dialect, layout).

The ``.lark`` files are the single source of truth: template rules carry a ``//@ first..last``
directive (the Kafka tags that log them, optionally ``kraft``); everything else (field rules,
terminals, helpers) is shared. A dialect's grammar is the shared part plus its live templates.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources

from lark import Lark
from lark.exceptions import GrammarError as LarkGrammarError

from kafka_forensics.core.eras import AUTO, BY_NAME, DIALECTS
from kafka_forensics.core.errors import GrammarError, UsageError
from kafka_forensics.core.versions import KafkaVersion

from .layout import parse_layout

_GRAMMAR_PACKAGE = "kafka_forensics.parsers"
_SHARED_FILES = ("header.lark", "fields.lark")
_DIRECTIVE_RE = re.compile(r"^//@\s*(\S+)\.\.(\S+)\s*(kraft)?\s*$")
_DEFINITION_RE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\.-?\d+)?\s*:")
START_SYMBOLS = ("record", "other_record", "header_record", "continuation")


@dataclass(frozen=True)
class TemplateSpec:
    """One message template: a rule in an era file and the Kafka versions that log it."""

    rule: str
    event_type: str
    since: KafkaVersion
    until: KafkaVersion  # HEAD: still logged on trunk
    kraft_only: bool
    source: str


@dataclass(frozen=True)
class GrammarSources:
    shared: str
    templates: dict[str, tuple[TemplateSpec, str]]


def _grammar_files() -> list[tuple[str, str]]:
    folder = resources.files(_GRAMMAR_PACKAGE) / "grammar"
    names = sorted(p.name for p in folder.iterdir() if p.name.endswith(".lark"))
    ordered = list(_SHARED_FILES) + [n for n in names if n not in _SHARED_FILES]
    return [(n, (folder / n).read_text(encoding="utf-8")) for n in ordered]


def _split_definitions(text: str):
    """Yield (name, definition text, directive match or None) for each rule/terminal."""
    directive = None
    current: list[str] | None = None
    name = None
    pending = None
    for line in text.splitlines():
        stripped = line.strip()
        starts = _DEFINITION_RE.match(line)
        if starts or (not stripped) or (stripped.startswith("//") and not line[:1].isspace()):
            if current is not None:
                yield name, "\n".join(current), pending
                current = None
        if stripped.startswith("//"):
            found = _DIRECTIVE_RE.match(stripped)
            if found:
                directive = found
            continue
        if starts:
            name, current, pending, directive = starts.group(1), [line], directive, None
        elif current is not None and stripped:
            current.append(line)
        elif stripped.startswith("%"):
            yield None, line, None
    if current is not None:
        yield name, "\n".join(current), pending


@functools.lru_cache(maxsize=1)
def grammar_sources() -> GrammarSources:
    shared: list[str] = []
    templates: dict[str, tuple[TemplateSpec, str]] = {}
    for filename, text in _grammar_files():
        for name, definition, directive in _split_definitions(text):
            if directive is None:
                shared.append(definition)
                continue
            if "__" not in name:
                raise GrammarError(f"{filename}: template rule {name} must be named <event_type>__<variant>")
            if name in templates:
                raise GrammarError(f"{filename}: template {name} defined twice")
            spec = TemplateSpec(
                rule=name,
                event_type=name.split("__", 1)[0],
                since=KafkaVersion.parse(directive.group(1)),
                until=KafkaVersion.parse(directive.group(2)),
                kraft_only=bool(directive.group(3)),
                source=filename,
            )
            templates[name] = (spec, definition)
    return GrammarSources("\n".join(shared), templates)


@functools.lru_cache(maxsize=1)
def template_lives() -> dict[str, TemplateSpec]:
    """Every template rule by name (the ``template`` column of an event): the Kafka releases that print it."""
    return {name: spec for name, (spec, _) in grammar_sources().templates.items()}


def templates_for(dialect: str) -> list[TemplateSpec]:
    """The templates a dialect's grammar holds (``auto``: all of them)."""
    specs = [spec for spec, _ in grammar_sources().templates.values()]
    if dialect == AUTO:
        return specs
    try:
        d = BY_NAME[dialect]
    except KeyError:
        raise UsageError(f"unknown dialect {dialect!r} (known: {', '.join(x.name for x in DIALECTS)}, auto)") from None
    return [s for s in specs if d.covers(s.since, s.until, s.kraft_only)]


def _terminal_regexes(shared: str) -> dict[str, str]:
    """Regexes of the header terminals, for the layout's REST lookahead."""
    found = {}
    for name in ("TIMESTAMP", "LEVEL", "LEVEL_PADDED", "LOGGER", "THREAD"):
        m = re.search(rf"^{name}(?:\.-?\d+)?\s*:\s*/(.*)/\s*$", shared, re.M)
        if m is None:
            raise GrammarError(f"header.lark lacks terminal {name}")
        found[name] = m.group(1)
    return found


def grammar_text(dialect: str, layout: str | None = None, start: str = "record") -> str:
    """Grammar for one start symbol. ``record`` holds the dialect's templates; ``other_record``
    (free text) and ``continuation`` are separate parsers so LALR never merges their states
    with the templates' (a shared state would let free text swallow a template's first word)."""
    sources = grammar_sources()
    parts = [sources.shared]
    if start == "continuation":
        return sources.shared + "\nREST: /.+/\n"
    shell = parse_layout(layout).shell_rules(start, _terminal_regexes(sources.shared))
    parts.insert(0, shell)
    if start == "record":
        chosen = templates_for(dialect)
        if not chosen:
            raise GrammarError(f"dialect {dialect} selects no template")
        parts.append("_message: " + "\n        | ".join(s.rule for s in chosen))
        parts.extend(sources.templates[s.rule][1] for s in chosen)
    return "\n\n".join(parts) + "\n"


@functools.lru_cache(maxsize=64)
def build_lark(dialect: str, layout: str | None = None, start: str = "record") -> Lark:
    """The LALR parser for one start symbol of a dialect (built once per process)."""
    if start not in START_SYMBOLS:
        raise GrammarError(f"unknown start symbol {start}")
    text = grammar_text(dialect, layout, start)
    try:
        return Lark(
            text,
            parser="lalr",
            lexer="contextual",
            start=start,
            keep_all_tokens=True,
            maybe_placeholders=False,
        )
    except LarkGrammarError as err:
        raise GrammarError(f"grammar for dialect {dialect} ({start}) does not build: {err}") from err
