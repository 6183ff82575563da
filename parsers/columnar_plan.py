"""What the columnar parser runs, generated from the same Lark grammar objects as the fast path.

Per (dialect, layout), built once per process:

* the **header** of the default layout as one column-wise regex (``vector_regex.translate`` of the
  fast path's own header regex, used only where the translation is exact);
* the **identity prefixes**, one branch per ``ident`` expansion in grammar order, each with its
  column-wise translation (exact, or a superset filter that leaves the answer to Python);
* per grammar (the dialect's, then the all-eras retry), the **templates** in the fast path's
  order (word buckets, then the generic bucket), each with its **skeletons** (the texts every
  match starts with once its digit runs are collapsed: the rule's string terminals read on past
  fields that are digit runs, ``skeletons``) and its own Python regex (the same text the fast
  path's bucket alternation holds for it, alone, anchored at the end).

A skeleton is a necessary condition, so "the first template in order one of whose skeletons the
message starts with" is the only one that can be the fast path's answer before it; its own regex
then confirms it, or the later templates of its bucket that share its start decide (``later_rules``:
the others cannot match either).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

import polars as pl
from lark import Lark

from kafka_forensics.core.eras import AUTO

from .fastpath import Bucket, FastGrammar, _bucket, _Compiler
from .grammar_loader import build_lark, templates_for
from .lines import FastLineParser
from .vector_regex import VectorRegex, escape, translate


@dataclass(frozen=True)
class IdentBranch:
    """One ``ident`` expansion: its fields (in group order) and its column-wise translation."""

    roles: tuple[str, ...]
    vector: VectorRegex | None


@dataclass(frozen=True)
class TemplatePlan:
    rule: str
    regex: re.Pattern  # the template alone, as the fast path compiles it, then \Z
    roles: tuple[str, ...]  # the field of each capture group, in order
    skeletons: tuple[str, ...]  # ``digit_runs_as_zero`` of every match starts with one of these
    vector: VectorRegex | None  # the regex column-wise (exact, or a superset filter)


@dataclass(frozen=True)
class GrammarPlan:
    """The templates of one grammar in the order the fast path tries them."""

    fast: FastGrammar
    word_templates: tuple[TemplatePlan, ...]  # bucket by bucket, each bucket in its own order
    generic_templates: tuple[TemplatePlan, ...]  # the generic bucket, in its order
    generic_filter: str | None  # column-wise: a superset of the generic bucket's matches (None: a
    # template has no column-wise form)
    candidates: str | None  # column-wise: ^(?:skeleton|skeleton|...) over word_templates, in order
    first_with_skeleton: dict[str, int]  # matched skeleton -> index of the first template with it
    words: tuple[str, ...]  # per word template, its bucket's word
    after: tuple[tuple[str, ...], ...]  # per word template, the later rules of its bucket that may
    # still match a message it was the candidate of (``later_rules``)
    compiler: _Compiler = field(compare=False, repr=False)
    _after_buckets: dict[int, Bucket | None] = field(default_factory=dict, compare=False, repr=False)

    @functools.cached_property
    def _skeleton_columns(self) -> tuple[pl.Series, pl.Series]:
        """``first_with_skeleton`` as two columns, made once: Polars converts a dict on every call."""
        skeletons = self.first_with_skeleton
        return pl.Series(list(skeletons), dtype=pl.String), pl.Series(list(skeletons.values()), dtype=pl.Int32)

    def candidate_ids(self, found: pl.Series) -> pl.Series:
        """``first_with_skeleton`` of each matched skeleton (-1: none)."""
        keys, ids = self._skeleton_columns
        return found.replace_strict(keys, ids, default=-1, return_dtype=pl.Int32)

    def after_bucket(self, template: int) -> Bucket | None:
        """The alternation of ``after[template]`` in bucket order, as the fast path compiles a
        bucket (None: no later rule can match). Built on first use: most templates never need it."""
        if template not in self._after_buckets:
            rules = list(self.after[template])
            self._after_buckets[template] = _bucket(self.compiler, rules) if rules else None
        return self._after_buckets[template]


@dataclass(frozen=True)
class HeaderPlan:
    """The record header column-wise: ``line`` says which lines are records; ``before`` reads the
    parts before the message (anchored at the start), ``after`` the parts after it (at the end).
    Each is group 1 = its whole text, then one group per header value in pattern order."""

    line: str
    before: str
    before_roles: tuple[str, ...]
    after: str
    after_roles: tuple[str, ...]


@dataclass(frozen=True)
class IdentAlternation:
    """Consecutive exact ``ident`` branches as one column-wise alternation: group 1 is the whole
    prefix; ``markers[k]`` is the (empty) group that says branch ``first + k`` matched and
    ``fields[k]`` the groups of its fields."""

    pattern: str
    first: int
    markers: tuple[int, ...]
    fields: tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class ColumnarPlan:
    fast: FastLineParser  # the reference classifier (fallback for every line the plan leaves)
    header: HeaderPlan | None  # None: records are found by the reference, line by line
    prefixed: HeaderPlan | None  # the same header after a tooling prefix (docker compose, grep), its
    # ``prefix`` first; tried on the lines ``header`` leaves, as the fast path tries its headers in order
    ident: tuple[IdentBranch, ...]
    ident_steps: tuple[IdentAlternation | int, ...]  # in grammar order; an int: one inexact branch
    ident_opener: VectorRegex | None
    grammars: tuple[GrammarPlan, ...]
    record_starts: str | None  # column-wise: a superset of the lines any record header can start
    skeleton_chars: int  # the longest skeleton of any template


# Terminals that match runs of ASCII digits only (on ASCII text), and the placeholders that stand for
# every text they match in a skeleton (``skeletons``): "0" for any digit run, "-0" for a negative one.
_DIGIT_RUNS = {r"\d+": ("0",), r"[0-9]+": ("0",), r"-?\d+": ("0", "-0"), r"-?[0-9]+": ("0", "-0")}
DIGIT_RUN = r"[0-9]+"  # what ``digit_runs_as_zero`` replaces (column-wise: ``str.replace_all``)
MAX_SKELETONS = 16  # variants per template (a template with more stops where they would multiply)
# Skeletons are cut to this many characters: a longer literal alternation costs Polars more per row
# than the rare candidate it would still tell apart (a cut skeleton is still a necessary condition).
MAX_SKELETON_CHARS = 48


def digit_runs_as_zero(text: str) -> str:
    """Every run of ASCII digits as one "0": a line and a template's skeleton compare alike."""
    return re.sub(DIGIT_RUN, "0", text)


def skeletons(lark: Lark, compiler: _Compiler, rule: str) -> tuple[str, ...]:
    """Texts one of which starts ``digit_runs_as_zero`` of every (ASCII) message the template
    matches: its literal text read on past fields that are digit runs (each as a placeholder
    "0", or "-0" too for a signed one), up to the first other field, then cut back to its last
    non-digit character (a digit run of the message may go on past it). Longer than the literal
    prefix, so a message of another template or era sharing that prefix finds no candidate, or
    the right one, more often. Why it is exact: the message's text up to that point differs from
    the skeleton only inside digit runs, so both are equal once runs are collapsed."""
    out: list[str] = []
    for expansion in compiler.rules[rule]:
        for text, _ in _walk(lark, compiler, list(expansion), (rule,)):
            skeleton = digit_runs_as_zero(text.rstrip("0123456789"))
            if skeleton not in out:
                out.append(skeleton)
    if len(out) > MAX_SKELETONS:  # their common start alone (still a start of every match)
        out = [_common_prefix(out)]
    return tuple(dict.fromkeys(skeleton[:MAX_SKELETON_CHARS] for skeleton in out))


def _walk(lark: Lark, compiler: _Compiler, symbols: list, stack: tuple[str, ...]) -> list[tuple[str, bool]]:
    """(text, complete) per way through ``symbols``: the skeleton so far and whether it covers the
    whole sequence (else it stops there). At most MAX_SKELETONS ways: past that, they stop."""
    ways = [("", True)]
    for symbol in symbols:
        if not any(complete for _, complete in ways):
            break
        if symbol.is_term:
            pattern = lark.get_terminal(symbol.name).pattern
            if pattern.flags:
                options = [("", False)]
            elif pattern.type == "str":
                options = [(pattern.value, True)]
            else:
                options = [(p, True) for p in _DIGIT_RUNS.get(pattern.value, ())] or [("", False)]
        elif symbol.name in stack:
            options = [("", False)]
        else:
            options = []
            for expansion in compiler.rules[symbol.name]:
                options.extend(_walk(lark, compiler, list(expansion), stack + (symbol.name,)))
        grown = [(text + more, done) for text, complete in ways if complete for more, done in options]
        if len(grown) + sum(not complete for _, complete in ways) > MAX_SKELETONS:
            return [(text, False) for text, _ in ways]
        ways = [way for way in ways if not way[1]] + grown
    return ways


def _common_prefix(texts: list[str]) -> str:
    if not texts:
        return ""
    first, last = min(texts), max(texts)
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[:n]


def _template_plans(lark: Lark, compiler: _Compiler, rules: list[str]) -> list[TemplatePlan]:
    plans = []
    for rule in rules:
        roles: list[str] = []
        text = compiler.rule(rule, roles)
        regex = re.compile("(?:" + text + r")\Z", re.S)
        plans.append(
            TemplatePlan(rule, regex, tuple(roles), skeletons(lark, compiler, rule), translate(regex, anchored=True))
        )
    return plans


def later_rules(plans: list[TemplatePlan], words: list[str]) -> list[tuple[str, ...]]:
    """Per template, the later templates of its bucket with a skeleton that starts where one of its
    own does, or is the start of one (either way). A message whose candidate is template ``t`` (the
    first with a skeleton the message starts with) and that ``t``'s regex rejects can match only
    one of these: a template that matches has a skeleton the message starts with, and of two
    starts of one text, one starts the other. So this short alternation gives the bucket's answer
    (``fastpath.match_template``), and the earlier templates of the bucket cannot match at all."""
    out = []
    for t, (plan, word) in enumerate(zip(plans, words)):
        later = []
        for other, other_word in zip(plans[t + 1 :], words[t + 1 :]):
            if other_word == word and any(
                a.startswith(b) or b.startswith(a) for a in plan.skeletons for b in other.skeletons
            ):
                later.append(other.rule)
        out.append(tuple(later))
    return out


def _grammar_plan(fast: FastGrammar, lark: Lark) -> GrammarPlan:
    ordered = [t.rule for bucket in fast.buckets.values() for t in bucket.by_marker.values()]
    words = [word for word, bucket in fast.buckets.items() for _ in bucket.by_marker]
    generic = [t.rule for t in fast.generic.by_marker.values()] if fast.generic else []
    compiler = _Compiler(lark)
    plans = _template_plans(lark, compiler, ordered)
    generic_plans = _template_plans(lark, compiler, generic)
    first: dict[str, int] = {}  # skeleton -> the first template (in order) with it
    for i, plan in enumerate(plans):
        for skeleton in plan.skeletons:
            first.setdefault(skeleton, i)
    candidates = None
    if plans:
        # leftmost-first: the first skeleton in template order that the message starts with
        candidates = "^(?:" + "|".join(escape(skeleton) for skeleton in first) + ")"
    return GrammarPlan(
        fast,
        tuple(plans),
        tuple(generic_plans),
        _any_of(generic_plans),
        candidates,
        first,
        tuple(words),
        tuple(later_rules(plans, words)),
        compiler,
    )


def _any_of(plans: list[TemplatePlan]) -> str | None:
    """One column-wise alternation of the templates' translations (each exact or a superset):
    a row it rejects matches none of them, so Python's regex runs only on the rows it accepts."""
    if not plans or any(p.vector is None for p in plans):
        return None
    return "^(?:" + "|".join(p.vector.pattern.removeprefix("^") for p in plans) + ")"  # type: ignore[union-attr]


def _ident_branches(lark: Lark) -> tuple[tuple[IdentBranch, ...], VectorRegex | None]:
    compiler = _Compiler(lark)
    branches = []
    openers = []
    for expansion in compiler.rules["ident"]:
        roles: list[str] = []
        text = compiler.sequence(expansion, roles, ("ident",))
        branches.append(IdentBranch(tuple(roles), translate(text, anchored=True)))
        head = expansion[0]
        openers.append(compiler.terminal(head.name) if head.is_term else compiler.rule(head.name, []))
    return tuple(branches), translate("(?:" + "|".join(openers) + ")", anchored=True)


def _header_plan(header: re.Pattern) -> HeaderPlan | None:
    """Split the fast path's header regex (no tooling prefix) around its ``body`` group. Reading the
    parts apart gives the same values as the whole regex when the part after the message can
    start at one place only: its first character appears nowhere else in it."""
    whole = translate(header, anchored=True)
    text = header.pattern
    body = "(?P<body>.*)"
    if whole is None or not whole.exact or text.count(body) != 1:
        return None
    before_text, after_text = text.split(body)
    before = translate(before_text, anchored=True)
    after = translate(after_text)
    if before is None or after is None or not (before.exact and after.exact):
        return None
    if not _starts_uniquely(after_text):
        return None
    names = {v: k for k, v in header.groupindex.items()}
    before_roles = tuple(
        names[i]
        for i in range(1, header.groups + 1)
        if names.get(i) and header.pattern.index(f"(?P<{names[i]}>") < header.pattern.index(body)
    )
    after_roles = tuple(
        names[i]
        for i in range(1, header.groups + 1)
        if names.get(i) and header.pattern.index(f"(?P<{names[i]}>") > header.pattern.index(body)
    )
    return HeaderPlan(whole.pattern, "(" + before.pattern + ")", before_roles, "(" + after.pattern + ")", after_roles)


def _starts_uniquely(pattern: str) -> bool:
    from .vector_regex import first_char_elsewhere

    return not first_char_elsewhere(pattern)


def _ident_steps(branches: tuple[IdentBranch, ...]) -> tuple[IdentAlternation | int, ...]:
    steps: list[IdentAlternation | int] = []
    run: list[int] = []

    def flush() -> None:
        if not run:
            return
        parts, markers, fields = [], [], []
        group = 1  # group 1: the whole prefix
        for b in run:
            width = len(branches[b].roles)
            fields.append(tuple(range(group + 1, group + 1 + width)))
            group += width + 1
            markers.append(group)
            parts.append(branches[b].vector.pattern.removeprefix("^") + "()")  # type: ignore[union-attr]
        steps.append(IdentAlternation("^((?:" + "|".join(parts) + "))", run[0], tuple(markers), tuple(fields)))
        run.clear()

    for b, branch in enumerate(branches):
        if branch.vector is not None and branch.vector.exact:
            run.append(b)
        else:
            flush()
            steps.append(b)
    flush()
    return tuple(steps)


@functools.lru_cache(maxsize=32)
def columnar_plan(dialect: str, layout: str | None) -> ColumnarPlan:
    """The plan for one (dialect, layout); the fast path's own objects are shared, not rebuilt."""
    from .records import line_parser  # records imports this module's users; built lazily

    fast: FastLineParser = line_parser(dialect, layout, False)
    # the expansion without a tooling prefix (the fast path tries it first), then the one with it
    header = _header_plan(fast.primary.headers[0])
    prefixed = _prefixed_plan(fast.primary.headers, header)
    record = build_lark(dialect, layout, "record")
    grammars = [_grammar_plan(fast.grammars[0], record)]
    if len(fast.grammars) > 1:
        grammars.append(_grammar_plan(fast.grammars[1], build_lark(AUTO, layout, "record")))
    ident, opener = _ident_branches(record)
    auto = line_parser(AUTO, layout, False).primary
    starts = translate("(?:" + fast.primary.record_start.pattern + "|" + auto.record_start.pattern + ")", anchored=True)
    longest = max((len(s) for g in grammars for s in g.first_with_skeleton), default=0)
    return ColumnarPlan(
        fast,
        header,
        prefixed,
        ident,
        _ident_steps(ident),
        opener,
        tuple(grammars),
        starts.pattern if starts else None,
        longest,
    )


def _prefixed_plan(headers: tuple[re.Pattern, ...], plain: HeaderPlan | None) -> HeaderPlan | None:
    """The fast path's second header, a tooling prefix then the first one's parts, column-wise: only
    if it is exactly that (its part after the message is the plain header's, its first value the
    prefix), so that a line the plain header leaves is read by it as the fast path reads it."""
    if plain is None or len(headers) != 2 or "prefix" not in headers[1].groupindex:
        return None
    prefixed = _header_plan(headers[1])
    if prefixed is None or prefixed.after != plain.after or prefixed.before_roles != ("prefix", *plain.before_roles):
        return None
    return prefixed


__all__ = ["ColumnarPlan", "GrammarPlan", "IdentBranch", "TemplatePlan", "columnar_plan", "templates_for"]
