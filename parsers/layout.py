"""The log4j ConversionPattern → the grammar rules for a record's shell.

Kafka ships ``[%d] %p %m (%c)%n`` in every version (kafka-log-formats.md §1); operators sometimes
change it, so ``--layout`` takes the pattern and the header grammar follows. The same compiled
description feeds the Lark grammar (``record`` / ``other_record`` rules and the ``REST`` terminal)
and the fast path (via the grammar), so both read headers identically.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kafka_forensics.core.errors import LayoutError

KAFKA_LAYOUT = "[%d] %p %m (%c)%n"

# conversion character → (terminal in header.lark, regex of that terminal for lookaheads)
_CONVERSIONS = {
    "d": "TIMESTAMP",
    "date": "TIMESTAMP",
    "p": "LEVEL",
    "level": "LEVEL",
    "c": "LOGGER",
    "logger": "LOGGER",
    "t": "THREAD",
    "thread": "THREAD",
}
_CONVERSION_RE = re.compile(r"%(-?\d+)?(?:\.\d+)?([a-zA-Z]+)(\{[^}]*\})?|%%|%n")


@dataclass(frozen=True)
class Layout:
    """A parsed ConversionPattern: what surrounds ``%m`` in a record line."""

    pattern: str
    before: tuple[tuple[str, str], ...]  # ("lit", text) | ("term", TERMINAL_NAME)
    after: tuple[tuple[str, str], ...]

    def shell_rules(self, start: str, terminal_regex: dict[str, str]) -> str:
        """The Lark rule for ``start`` and the terminal ``REST``: ``record`` (identity and templates),
        ``other_record`` (identity and free text) or ``header_record`` (the header alone: whatever
        lies between the layout's parts is the message, which is what makes a line a record)."""
        pre = " ".join(_lark_part(p) for p in self.before)
        post = " ".join(_lark_part(p) for p in self.after)
        suffix = "".join(_regex_part(p, terminal_regex) for p in self.after) + "$"
        rest = "REST: /(?s:.+?)(?=" + suffix.replace("/", "\\/") + ")/\n"  # messages may span lines
        if start == "record":
            return f"record: line_prefix? {pre} body {post}\nbody: ident? _message\n" + rest
        if start == "other_record":
            return f"other_record: line_prefix? {pre} other_body {post}\n" + rest
        return f"header_record: line_prefix? {pre} header_body {post}\nheader_body: REST?\n" + rest


def _lark_part(part: tuple[str, str]) -> str:
    kind, value = part
    if kind == "lit":
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return value


def _regex_part(part: tuple[str, str], terminal_regex: dict[str, str]) -> str:
    kind, value = part
    if kind == "lit":
        return re.escape(value)
    return "(?:" + terminal_regex[value] + ")"


def parse_layout(pattern: str | None) -> Layout:
    """Split a ConversionPattern around ``%m``; unsupported conversions raise LayoutError."""
    pattern = pattern or KAFKA_LAYOUT
    parts: list[tuple[str, str]] = []
    pos = 0
    message_at = None
    for m in _CONVERSION_RE.finditer(pattern):
        if m.start() > pos:
            parts.append(("lit", pattern[pos : m.start()]))
        pos = m.end()
        token = m.group(0)
        if token == "%%":
            parts.append(("lit", "%"))
            continue
        if token == "%n":
            if pattern[pos:].strip():
                raise LayoutError(f"layout {pattern!r}: %n must end the pattern")
            continue
        name = m.group(2)
        if name in ("m", "msg", "message"):
            if message_at is not None:
                raise LayoutError(f"layout {pattern!r} has %m twice")
            message_at = len(parts)
            parts.append(("msg", ""))
            continue
        terminal = _CONVERSIONS.get(name)
        if terminal is None:
            raise LayoutError(
                f"layout {pattern!r}: conversion %{name} is not supported (supported: %d %p %c %t %m %n %%)"
            )
        if m.group(1) and terminal == "LEVEL":
            terminal = "LEVEL_PADDED"
        parts.append(("term", terminal))
    if pos < len(pattern):
        parts.append(("lit", pattern[pos:]))
    if message_at is None:
        raise LayoutError(f"layout {pattern!r} has no %m: no message to parse")
    _merge_literals(parts)
    index = next(i for i, p in enumerate(parts) if p[0] == "msg")
    return Layout(pattern, tuple(parts[:index]), tuple(parts[index + 1 :]))


def _merge_literals(parts: list[tuple[str, str]]) -> None:
    i = 0
    while i + 1 < len(parts):
        if parts[i][0] == parts[i + 1][0] == "lit":
            parts[i] = ("lit", parts[i][1] + parts[i + 1][1])
            del parts[i + 1]
        else:
            i += 1
