"""Classify one line: a record (typed or ``other``), a continuation line, or quarantine.

Two interchangeable implementations share this contract and the field converters:
``LarkLineParser`` (plain Lark, the reference) and ``FastLineParser`` (regexes compiled from the
same grammar). ``tests/parsers/test_differential.py`` runs both over every corpus line and compares them.

The decision, in this order (what a column-wise implementation must reproduce):

1. **Record**: the line matches the layout's header (optional tooling prefix, then the layout
   around ``%m``; for Kafka's ``[%d] %p %m (%c)``: ``[timestamp] LEVEL message (logger)`` to the
   end of the line). The header alone decides; the message only refines the record:
   a known identity prefix (``ident``) gives identity fields, a template gives ``template`` and
   its fields; an identity opener that cannot be completed (``[Controller id=`` and then
   something no ident rule knows and no bracketed class prefix either) gives neither, and the
   whole text between the header parts is the message.
2. **Continuation**: a stack-trace line (``continuation`` in header.lark).
3. **Quarantine**: anything else (``NOT_A_RECORD``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lark import Token, Tree
from lark.exceptions import UnexpectedInput

from kafka_forensics.core.eras import AUTO

from .fastpath import FastGrammar, compile_fast_grammar, field_pairs, match_template, retry_rules
from .fields import FIELDS
from .grammar_loader import build_lark, templates_for

RECORD = "record"
CONTINUATION = "continuation"
QUARANTINE = "quarantine"

NOT_A_RECORD = (
    "not a log record: neither a '[timestamp] LEVEL message (logger)' line the grammar accepts nor a stack-trace line"
)


@dataclass(slots=True)
class LineResult:
    kind: str
    ts_raw: str | None = None
    level: str | None = None
    logger: str | None = None
    prefix: str | None = None
    message: str | None = None
    template: str | None = None  # rule name; None for a record no template types ("other")
    fields: list[tuple[str, str]] = field(default_factory=list)
    reason: str | None = None

    def key(self) -> tuple:
        """Everything the two paths must agree on."""
        return (
            self.kind,
            self.ts_raw,
            self.level,
            self.logger,
            self.prefix,
            self.message,
            self.template,
            tuple(self.fields),
            self.reason,
        )


def _text(tree) -> str:
    if isinstance(tree, Token):
        return str(tree)
    return "".join(_text(child) for child in tree.children)


def _collect(tree: Tree, fields: list[tuple[str, str]], templates: list[str], template_names) -> None:
    for child in tree.children:
        if isinstance(child, Tree):
            name = child.data
            if name in FIELDS:
                fields.append((str(name), _text(child)))
            else:
                if name in template_names:
                    templates.append(str(name))
                _collect(child, fields, templates, template_names)


class LarkLineParser:
    """The reference path: plain Lark LALR, one parse attempt per start symbol."""

    def __init__(self, dialect: str = AUTO, layout: str | None = None) -> None:
        self.dialect = dialect
        self.typed = [build_lark(dialect, layout, "record")]
        if dialect != AUTO:
            self.typed.append(build_lark(AUTO, layout, "record"))
        self.other = build_lark(AUTO, layout, "other_record")
        self.header = build_lark(AUTO, layout, "header_record")
        self.continuation = build_lark(AUTO, layout, "continuation")
        self.template_names = {t.rule for t in templates_for(AUTO)}

    def classify(self, line: str) -> LineResult:
        for parser in self.typed:
            try:
                return self._record(parser.parse(line), "body")
            except UnexpectedInput:
                continue
        try:
            return self._record(self.other.parse(line), "other_body")
        except UnexpectedInput:
            pass
        try:  # the header alone decides: a line with it is a record whatever its message holds
            return self._record(self.header.parse(line), "header_body")
        except UnexpectedInput:
            pass
        try:
            self.continuation.parse(line)
            return LineResult(CONTINUATION)
        except UnexpectedInput:
            pass
        return LineResult(QUARANTINE, reason=NOT_A_RECORD)

    def _record(self, tree: Tree, body_name: str) -> LineResult:
        result = LineResult(RECORD)
        templates: list[str] = []
        for child in tree.children:
            if isinstance(child, Token):
                if child.type == "TIMESTAMP":
                    result.ts_raw = str(child)
                elif child.type in ("LEVEL", "LEVEL_PADDED"):
                    result.level = str(child).rstrip()
                elif child.type == "LOGGER":
                    result.logger = str(child)
            elif child.data == "line_prefix":
                result.prefix = _text(child)
            elif child.data == body_name:
                result.message = _text(child)
                _collect(child, result.fields, templates, self.template_names)
        result.template = templates[0] if templates else None
        return result


class FastLineParser:
    """The hot path: regexes generated from the same grammar (see fastpath.py)."""

    def __init__(self, dialect: str = AUTO, layout: str | None = None) -> None:
        self.dialect = dialect
        cont = build_lark(AUTO, layout, "continuation")
        record = build_lark(dialect, layout, "record")
        rules = [t.rule for t in templates_for(dialect)]
        self.grammars: list[FastGrammar] = [compile_fast_grammar(record, cont, rules)]
        if dialect != AUTO:
            # the all-eras retry (as LarkLineParser does), minus templates that already failed
            every = build_lark(AUTO, layout, "record")
            retry = retry_rules(record, rules, every, [t.rule for t in templates_for(AUTO)])
            if retry:
                self.grammars.append(compile_fast_grammar(every, cont, retry))
        self.primary = self.grammars[0]
        fast = self.primary
        # (regex, does it capture a line prefix): group lookups by name, no groupdict per line
        self._headers = tuple((h, "prefix" in h.groupindex) for h in fast.headers)
        self._ident_plan = {
            marker: (roles, tuple(range(first + 1, first + 1 + len(roles))))
            for marker, (first, roles) in fast.ident_roles.items()
        }

    def _not_a_record(self, line: str) -> LineResult:
        if self.primary.continuation.match(line):
            return LineResult(CONTINUATION)
        return LineResult(QUARANTINE, reason=NOT_A_RECORD)

    def classify(self, line: str) -> LineResult:
        fast = self.primary
        for header, has_prefix in self._headers:  # noqa: B007 - read after the loop breaks
            m = header.match(line)
            if m is not None:
                break
        else:
            return self._not_a_record(line)
        ts_raw, level, logger, body = m.group("ts", "level", "logger", "body")
        ident_fields: list[tuple[str, str]] = []
        rest = body
        im = fast.ident.match(body)
        if im is not None:
            roles, numbers = self._ident_plan[im.lastindex]  # type: ignore[index]  # a match sets it
            ident_fields = field_pairs(im, roles, numbers)
            rest = body[im.end() :]
        elif fast.ident_opener.match(body):
            # Lark's lexer commits to an identity opener it cannot complete, so no identity and no
            # template: the record is its header and the whole body (LarkLineParser's header_record).
            return LineResult(RECORD, ts_raw, level.rstrip(), logger, m.group("prefix") if has_prefix else None, body)
        template = None
        for grammar in self.grammars:
            found = match_template(grammar, rest)
            if found is not None:
                template, pairs = found
                ident_fields += pairs
                break
        return LineResult(
            RECORD,
            ts_raw,
            level.rstrip(),
            logger,
            m.group("prefix") if has_prefix else None,
            body,
            template,
            ident_fields,
        )
