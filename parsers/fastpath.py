"""The fast path: the dialect's Lark grammar compiled into a few regular expressions.

Nothing here is written by hand per template: every regex is generated from the loaded Lark
grammar (its rules and terminal patterns), so the grammar stays the single source of truth.
Each terminal becomes an atomic group, because Lark's lexer commits to a token and never
backtracks into it; each field rule becomes a capture group whose text goes through the same
converter as on the Lark path (fields.py). Templates are bucketed by their first literal word and
each bucket is one alternation whose branches end in an empty marker group, so one C-level
``fullmatch`` both recognises the template and captures its fields.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from lark import Lark

from kafka_forensics.core.errors import GrammarError

from .fields import FIELDS

_HEADER_ROLES = {
    "TIMESTAMP": "ts",
    "LEVEL": "level",
    "LEVEL_PADDED": "level",
    "LOGGER": "logger",
    "THREAD": "thread",
}


# ``(?:[^()]|\(...\))*`` (balanced parentheses, as the composite-value terminals are written)
# steps one character per loop iteration in Python's ``re``. ``[^()]++`` consumes a whole run at
# once and matches exactly the same text: the other branch starts with ``(``, which the run
# cannot contain, so no split of a run can ever lead to a different match.
_CHAR_BRANCH = r"(?:[^()]|\("
_RUN_BRANCH = r"(?:[^()]++|\("


def _possessive_runs(pattern: str) -> str:
    return pattern.replace(_CHAR_BRANCH, _RUN_BRANCH)


@dataclass
class _Compiler:
    """Turns rules of one Lark instance into regex text with numbered capture groups."""

    lark: Lark
    rules: dict[str, list] = field(default_factory=dict)
    patterns: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for rule in self.lark.rules:
            self.rules.setdefault(rule.origin.name, []).append(rule.expansion)
        for term in self.lark.terminals:
            self.patterns[term.name] = term.pattern.to_regexp()

    def terminal(self, name: str) -> str:
        if name == "REST":
            # REST's lookahead finds the layout suffix at the end of the *line*; the fast path
            # has already cut the message off at that same point, so the rest of it is the value.
            return "(?>.+)"
        return "(?>" + _possessive_runs(self.patterns[name]) + ")"

    def rule(self, name: str, roles: list[str], stack: tuple[str, ...] = ()) -> str:
        """Regex for a rule; appends one role per capture group it opens (in pattern order)."""
        if name in stack:
            raise GrammarError(f"rule {name} is recursive; templates must use list terminals")
        alternatives = []
        for expansion in self.rules[name]:
            alternatives.append(self.sequence(expansion, roles, stack + (name,)))
        if len(alternatives) == 1:
            return alternatives[0]
        return "(?:" + "|".join(alternatives) + ")"

    def sequence(self, expansion, roles: list[str], stack: tuple[str, ...]) -> str:
        parts = []
        for symbol in expansion:
            if symbol.is_term:
                parts.append(self.terminal(symbol.name))
            elif symbol.name in FIELDS:
                roles.append(symbol.name)
                inner: list[str] = []
                text = self.rule(symbol.name, inner, stack)
                if inner:
                    raise GrammarError(f"field {symbol.name} contains fields {inner}")
                parts.append("(" + text + ")")
            else:
                parts.append(self.rule(symbol.name, roles, stack))
        return "".join(parts)

    def lead_word(self, name: str) -> str | None:
        """First literal word every expansion of a rule starts with (None: starts with a value)."""
        words: set[Optional[str]] = set()
        for expansion in self.rules[name]:
            if not expansion:
                return None
            first = expansion[0]
            if first.is_term:
                pattern = self.lark.get_terminal(first.name).pattern
                if pattern.type != "str" or " " not in pattern.value:
                    return None
                words.add(pattern.value.split(" ", 1)[0])
            else:
                if first.name in FIELDS:
                    return None
                words.add(self.lead_word(first.name))
        if len(words) != 1 or None in words:
            return None
        return words.pop()


@dataclass(frozen=True)
class CompiledTemplate:
    rule: str
    roles: tuple[str, ...]
    first_group: int  # index into match.groups() of this template's first field group

    @property
    def end_group(self) -> int:
        return self.first_group + len(self.roles)

    @property
    def group_numbers(self) -> tuple[int, ...]:
        """1-based group numbers of this template's fields (for ``match.group(*numbers)``)."""
        return tuple(range(self.first_group + 1, self.end_group + 1))


@dataclass(frozen=True)
class Bucket:
    regex: re.Pattern
    by_marker: dict[int, CompiledTemplate]
    # lastindex → (rule, roles, group numbers): what the hot loop reads, precomputed
    plan: dict[int, tuple[str, tuple[str, ...], tuple[int, ...]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for marker, t in self.by_marker.items():
            self.plan[marker] = (t.rule, t.roles, t.group_numbers)


@dataclass(frozen=True)
class FastGrammar:
    """Everything the fast path needs for one (dialect, layout)."""

    headers: tuple[re.Pattern, ...]
    record_start: re.Pattern  # the header up to the message: a record begins on this line
    line_prefix: re.Pattern  # a tooling prefix (docker compose, grep) at the start of a line
    ident: re.Pattern
    ident_opener: re.Pattern
    ident_roles: dict[int, tuple[int, tuple[str, ...]]]
    buckets: dict[str, Bucket]
    generic: Bucket | None
    continuation: re.Pattern


def _record_start(compiler: _Compiler) -> re.Pattern:
    starts = []
    for expansion in compiler.rules["record"]:
        parts = []
        for symbol in expansion:
            if symbol.is_term:
                parts.append(compiler.terminal(symbol.name))
            elif symbol.name == "line_prefix":
                parts.append(compiler.rule("line_prefix", []))
            else:
                break
        starts.append("".join(parts))
    return re.compile("(?:" + "|".join(starts) + ")")


def _header_regexes(compiler: _Compiler) -> tuple[re.Pattern, ...]:
    compiled = []
    # The expansion without line_prefix first: it is by far the common case.
    expansions = sorted(compiler.rules["record"], key=lambda e: e[0].name == "line_prefix")
    for expansion in expansions:
        parts = []
        for symbol in expansion:
            if symbol.is_term:
                role = _HEADER_ROLES.get(symbol.name)
                text = compiler.patterns[symbol.name]
                parts.append(f"(?P<{role}>(?>{text}))" if role else "(?>" + text + ")")
            elif symbol.name == "line_prefix":
                parts.append("(?P<prefix>" + compiler.rule("line_prefix", []) + ")")
            elif symbol.name == "body":
                parts.append("(?P<body>.*)")
            else:
                raise GrammarError(f"record rule has unexpected part {symbol.name}")
        compiled.append(re.compile("".join(parts) + r"\Z", re.S))
    return tuple(compiled)


def _bucket(compiler: _Compiler, rules: list[str]) -> Bucket:
    branches = []
    by_marker: dict[int, CompiledTemplate] = {}
    group = 0
    for rule in rules:
        roles: list[str] = []
        text = compiler.rule(rule, roles)
        first = group
        group += len(roles)
        by_marker[group + 1] = CompiledTemplate(rule, tuple(roles), first)  # lastindex is 1-based
        group += 1  # the marker
        branches.append(text + "()")
    return Bucket(re.compile("(?:" + "|".join(branches) + r")\Z", re.S), by_marker)


def _ident(compiler: _Compiler):
    branches = []
    roles_by_marker: dict[int, tuple[int, tuple[str, ...]]] = {}
    group = 0
    openers = []
    for expansion in compiler.rules["ident"]:
        roles: list[str] = []
        text = compiler.sequence(expansion, roles, ("ident",))
        first = group
        group += len(roles)
        roles_by_marker[group + 1] = (first, tuple(roles))
        group += 1
        branches.append(text + "()")
        head = expansion[0]
        openers.append(compiler.terminal(head.name) if head.is_term else compiler.rule(head.name, []))
    ident = re.compile("(?:" + "|".join(branches) + ")")
    opener = re.compile("(?:" + "|".join(openers) + ")")
    return ident, opener, roles_by_marker


def compile_fast_grammar(record_lark: Lark, continuation_lark: Lark, template_rules: list[str]) -> FastGrammar:
    """Compile the ``record`` grammar of a dialect (and the continuation grammar)."""
    compiler = _Compiler(record_lark)
    headers = _header_regexes(compiler)
    ident, opener, ident_roles = _ident(compiler)
    by_word: dict[str, list[str]] = {}
    generic: list[str] = []
    for rule in template_rules:
        word = compiler.lead_word(rule)
        (by_word.setdefault(word, []) if word else generic).append(rule)
    buckets = {word: _bucket(compiler, rules) for word, rules in by_word.items()}
    cont = _Compiler(continuation_lark)
    continuation = re.compile(cont.rule("continuation", []) + r"\Z", re.S)
    return FastGrammar(
        headers=headers,
        record_start=_record_start(compiler),
        line_prefix=re.compile(compiler.rule("line_prefix", [])),
        ident=ident,
        ident_opener=opener,
        ident_roles=ident_roles,
        buckets=buckets,
        generic=_bucket(compiler, generic) if generic else None,
        continuation=continuation,
    )


def field_pairs(m: re.Match, roles: tuple[str, ...], numbers: tuple[int, ...]) -> list[tuple[str, str]]:
    """The (field, text) pairs a match captured, reading only the given groups."""
    if not numbers:
        return []
    if len(numbers) == 1:
        value = m.group(numbers[0])
        return [] if value is None else [(roles[0], value)]
    return [(role, v) for role, v in zip(roles, m.group(*numbers)) if v is not None]


def retry_rules(primary: Lark, primary_rules: list[str], fallback: Lark, fallback_rules: list[str]) -> list[str]:
    """The fallback grammar's templates that can still match after the primary grammar failed.

    A template that compiles to the same regex in both grammars has already failed on the same
    message, so retrying it cannot succeed; dropping it leaves the first match of every bucket
    unchanged and makes the all-eras retry of an untyped line cheaper (about a third fewer
    branches for a ZooKeeper-era dialect)."""
    primary_compiler, fallback_compiler = _Compiler(primary), _Compiler(fallback)
    tried = set(primary_rules)
    kept = []
    for rule in fallback_rules:
        if rule in tried:
            mine: list[str] = []
            theirs: list[str] = []
            if primary_compiler.rule(rule, mine) == fallback_compiler.rule(rule, theirs) and mine == theirs:
                continue
        kept.append(rule)
    return kept


def match_template(fast: FastGrammar, message: str) -> tuple[str, list[tuple[str, str]]] | None:
    """(template rule, [(field, text), ...]) for a message (after the identity prefix), or None."""
    space = message.find(" ")
    bucket = fast.buckets.get(message if space < 0 else message[:space])
    if bucket is not None:
        m = bucket.regex.match(message)
        if m is not None:
            rule, roles, numbers = bucket.plan[m.lastindex]  # type: ignore[index]  # a match sets it
            return rule, field_pairs(m, roles, numbers)
    bucket = fast.generic
    if bucket is not None:
        m = bucket.regex.match(message)
        if m is not None:
            rule, roles, numbers = bucket.plan[m.lastindex]  # type: ignore[index]  # a match sets it
            return rule, field_pairs(m, roles, numbers)
    return None
