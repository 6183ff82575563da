"""Python regular expressions → the regex dialect Polars runs column-wise (Rust's ``regex`` crate).

The columnar parser (``columnar.py``) never writes a regex of its own for what the grammar or
``fields.py`` already define: it translates their compiled Python patterns. Rust's engine has no
lookaround, atomic groups or possessive repeats, and its ``\\d``, ``\\w`` and ``\\s`` are Unicode
classes that differ from Python's. So a translation says how far it can be trusted:

* ``exact``: on any **ASCII** text the translation matches where the Python pattern matches, with
  the same capture groups (both engines prefer alternatives and repeats in the same leftmost-first
  order, and every class is spelled out over ASCII as Python defines it);
* otherwise it is a **superset** filter: every ASCII text the Python pattern matches, the
  translation matches too (a lookahead dropped, an atomic group or possessive repeat that may
  backtrack in Rust), so a row it rejects is certainly rejected, and a row it accepts still needs
  Python's answer;
* a superset can still be exact **but for** the texts ``excluded`` matches: a negative lookahead
  ``(?!X)`` that an anchored pattern meets after a fixed literal start ``L`` is tested at one
  place only, so the pattern matches exactly where the translation without it matches and
  ``^L(?:X)`` does not (``OTHER_IDENT``'s ``\\[(?!Controller id=...)``).

``translate`` returns None for what it cannot express at all (backreferences, conditionals).
Atomic groups and possessive repeats stay exact where backtracking into them could never change
the match: a literal, or a greedy run of one class that the next piece of the pattern cannot
start with (``(?>\\d+)`` before ``" epoch="``), or that ends the pattern.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from re import _constants as C
from re import _parser as P

_META = set("\\.+*?()|[]{}^$#&-~")
# Python's classes on ASCII (str patterns): \d = 0-9, \w = alphanumerics and _, \s = str.isspace()
_ASCII = [chr(i) for i in range(128)]
_CATEGORY_CHARS = {
    C.CATEGORY_DIGIT: {c for c in _ASCII if c.isdigit()},
    C.CATEGORY_WORD: {c for c in _ASCII if c.isalnum() or c == "_"},
    C.CATEGORY_SPACE: {c for c in _ASCII if c.isspace()},
}
_CATEGORY_CHARS[C.CATEGORY_NOT_DIGIT] = set(_ASCII) - _CATEGORY_CHARS[C.CATEGORY_DIGIT]
_CATEGORY_CHARS[C.CATEGORY_NOT_WORD] = set(_ASCII) - _CATEGORY_CHARS[C.CATEGORY_WORD]
_CATEGORY_CHARS[C.CATEGORY_NOT_SPACE] = set(_ASCII) - _CATEGORY_CHARS[C.CATEGORY_SPACE]
_ANCHORS = {
    C.AT_BEGINNING: "^",
    C.AT_BEGINNING_STRING: r"\A",
    C.AT_END_STRING: r"\z",
    C.AT_BOUNDARY: r"\b",
    C.AT_NON_BOUNDARY: r"\B",
}


@dataclass(frozen=True)
class VectorRegex:
    pattern: str  # Rust regex syntax
    exact: bool  # same matches and groups on ASCII text (else: a superset filter)
    excluded: str | None = None  # not exact, but exact on the ASCII texts this does not match


def escape(text: str) -> str:
    """A literal for Rust's regex syntax."""
    return "".join("\\" + c if c in _META else _char(c) for c in text)


def _char(c: str) -> str:
    if c in _META:
        return "\\" + c
    if c.isprintable():
        return c
    return f"\\x{{{ord(c):X}}}"


class _Untranslatable(Exception):
    pass


@dataclass
class _State:
    exact: bool = True
    dotall: bool = False
    prefix: str | None = None  # the literal text matched so far, while the pattern is one fixed
    # literal from its anchored start (None past that point, or unanchored)
    choices: int = 0  # inside an alternation or a repeat: a lookahead there is not at one place
    excluded: list[str] | None = None  # ``^L(?:X)`` per negative lookahead met at a fixed start


def translate(pattern: str | re.Pattern, anchored: bool = False) -> VectorRegex | None:
    """Translate a Python pattern; ``anchored`` puts it at the start of the text (``re.match``)."""
    if isinstance(pattern, re.Pattern):
        flags, text = pattern.flags, pattern.pattern
    else:
        flags, text = 0, pattern
    try:
        tree = P.parse(text, flags)
    except re.error:
        return None
    if tree.state.flags & (re.IGNORECASE | re.MULTILINE | re.ASCII | re.LOCALE):
        return None
    state = _State(dotall=bool(tree.state.flags & re.DOTALL), prefix="" if anchored else None, excluded=[])
    try:
        out = _sequence(list(tree), state, follow=_END)
    except _Untranslatable:
        return None
    pattern = ("^" if anchored else "") + out
    if state.excluded and state.exact:
        return VectorRegex(pattern, False, "^(?:" + "|".join(state.excluded) + ")")
    return VectorRegex(pattern, state.exact and not state.excluded)


_END = ("end", None)  # nothing follows: the pattern ends here
_UNKNOWN = ("unknown", None)  # what follows is not one item (inside a repeat)


def _sequence(items: list, state: _State, follow) -> str:
    """``follow``: the item after this sequence in the enclosing pattern (``_END``, ``_UNKNOWN``)."""
    parts = []
    for i, item in enumerate(items):
        later = [x for x in items[i + 1 :] if not _is_empty_group(x)]
        parts.append(_item(item, state, later[0] if later else follow))
    return "".join(parts)


def _is_empty_group(item) -> bool:
    return item[0] is C.SUBPATTERN and not list(item[1][3])


def _item(item, state: _State, follow) -> str:
    op, av = item
    if op is C.LITERAL:
        if state.prefix is not None:
            state.prefix += chr(av)
        return _char(chr(av))
    if op not in (C.AT, C.SUBPATTERN, C.ATOMIC_GROUP, C.ASSERT, C.ASSERT_NOT):
        state.prefix = None  # it may match texts of several lengths or characters
    if op is C.NOT_LITERAL:
        return "[^" + _set_char(chr(av)) + "]"
    if op is C.ANY:
        return "(?s:.)" if state.dotall else "."
    if op is C.IN:
        return _class(av)
    if op is C.AT:
        if av == C.AT_END:  # Python's $ also matches before a final \n: the same on text without one
            return "$"
        if av not in _ANCHORS:
            raise _Untranslatable(str(av))
        return _ANCHORS[av]
    if op is C.BRANCH:
        state.choices += 1
        out = "(?:" + "|".join(_sequence(list(b), state, follow) for b in av[1]) + ")"
        state.choices -= 1
        state.prefix = None
        return out
    if op is C.SUBPATTERN:
        group, add, delete, sub = av
        if add & ~re.DOTALL or delete:
            raise _Untranslatable("inline flags")
        saved = state.dotall
        state.dotall = state.dotall or bool(add & re.DOTALL)
        inner = _sequence(list(sub), state, follow)
        state.dotall = saved
        return ("(" if group is not None else "(?:") + inner + ")"
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
        low, high, sub = av
        state.choices += 1
        body = _sequence(list(sub), state, follow=_UNKNOWN)
        state.choices -= 1
        state.prefix = None
        if op is C.POSSESSIVE_REPEAT and not _atomic_is_plain([item], follow):
            state.exact = False
        return "(?:" + body + ")" + _quantifier(low, high) + ("?" if op is C.MIN_REPEAT else "")
    if op is C.ATOMIC_GROUP:
        if not _atomic_is_plain(list(av), follow):
            state.exact = False
        return "(?:" + _sequence(list(av), state, follow) + ")"
    if op is C.ASSERT_NOT and av[0] == 1 and state.prefix is not None and not state.choices:
        refused = _State(dotall=state.dotall)  # what the lookahead refuses, translated on its own
        try:
            body = _sequence(list(av[1]), refused, follow=_UNKNOWN)
        except _Untranslatable:
            body, refused.exact = "", False
        if refused.exact and state.excluded is not None:
            state.excluded.append(escape(state.prefix) + "(?:" + body + ")")
            return ""
    if op is C.ASSERT and _implied_lookahead(av, follow):
        return ""  # what follows must start with the character it looks for: dropping it changes nothing
    if op in (C.ASSERT, C.ASSERT_NOT):
        state.exact = False  # dropped: the translation accepts more than the pattern
        return ""
    raise _Untranslatable(str(op))


def _quantifier(low: int, high) -> str:
    if high is C.MAXREPEAT:
        return {0: "*", 1: "+"}.get(low, "{%d,}" % low)
    if low == high:
        return "{%d}" % low
    if (low, high) == (0, 1):
        return "?"
    return "{%d,%d}" % (low, high)


def _set_char(c: str) -> str:
    return "\\" + c if c in "\\]^-[&~" else _char(c)


def _class(items: list) -> str:
    negate = bool(items) and items[0][0] is C.NEGATE
    chars: set[str] = set()
    extra = []  # non-ASCII literals and ranges stay as they are
    for op, av in items[1:] if negate else items:
        if op is C.LITERAL and av < 128:
            chars.add(chr(av))
        elif op is C.LITERAL:
            extra.append(_set_char(chr(av)))
        elif op is C.RANGE:
            lo, hi = av
            chars.update(chr(i) for i in range(lo, min(hi, 127) + 1))
            if hi >= 128:
                extra.append(_set_char(chr(max(lo, 128))) + "-" + _set_char(chr(hi)))
        elif op is C.CATEGORY:
            if av not in _CATEGORY_CHARS:
                raise _Untranslatable(str(av))
            chars.update(_CATEGORY_CHARS[av])
        else:
            raise _Untranslatable(str(op))
    return "[" + ("^" if negate else "") + _ranges(chars) + "".join(extra) + "]"


def _ranges(chars: set[str]) -> str:
    codes = sorted(ord(c) for c in chars)
    out = []
    i = 0
    while i < len(codes):
        j = i
        while j + 1 < len(codes) and codes[j + 1] == codes[j] + 1:
            j += 1
        first, last = chr(codes[i]), chr(codes[j])
        out.append(_set_char(first) if i == j else _set_char(first) + "-" + _set_char(last))
        i = j + 1
    return "".join(out)


# ---- when an atomic group or possessive repeat cannot backtrack anyway ------------------------------


def _atomic_is_plain(items: list, follow) -> bool:
    """True if ``items`` can match at most one way at a position, given what follows: then
    forbidding backtracking into them (atomic group, possessive repeat) changes nothing. At the
    pattern's end nothing can ask for another way, so the first way is the match either way."""
    if follow is _END:
        return True
    items = _unwrap(items)
    if _width(items) is not None:  # fixed width: one possible match
        return True
    if _ends_at_one_place(items):
        return True
    if len(items) == 1 and items[0][0] is C.BRANCH:
        texts = [_literal_text(list(b)) for b in items[0][1][1]]
        words = [w for w in texts if w is not None]
        if len(words) == len(texts):
            return not any(a != b and b.startswith(a) for a in words for b in words)
        return False
    *head, last = items
    if head and _width(head) is None:
        return False
    if last[0] not in (C.MAX_REPEAT, C.POSSESSIVE_REPEAT) or follow is _UNKNOWN:
        return False
    _, high, sub = last[1]
    run = _single_class(list(sub))
    if run is None or high is not C.MAXREPEAT:
        return False
    if follow is _END:
        return True
    first = _first_chars(follow)
    return first is not None and not (first & run)


def _looked_for(av) -> str | None:
    """The one character a lookahead ``(?=c)`` looks for (None: it looks behind, or for more)."""
    direction, looked = av[0], list(av[1])
    if direction != 1 or len(looked) != 1 or looked[0][0] is not C.LITERAL:
        return None
    return chr(looked[0][1])


def _implied_lookahead(av, follow) -> bool:
    """A lookahead ``(?=c)`` for one character that the next piece of the pattern must start with
    (``GREP_PREFIX``'s ``:(?=\\[)`` before the header's ``\\[``)."""
    char = _looked_for(av)
    first = _first_chars(follow)
    return char is not None and first is not None and first <= {char}


def _ends_at_one_place(items: list) -> bool:
    """True if every match of ``items`` from one start ends at the same place, so that forbidding
    backtracking into them changes nothing: they end with a character ``c`` (a literal followed
    only by literals, or a lookahead for ``c`` at the very end) that nothing before it can match,
    so a match ends at the first ``c`` (``DOCKER_PREFIX``'s ``| ``, ``GREP_PREFIX``'s ``(?=\\[)``)."""
    for k, (op, av) in enumerate(items):
        if op is C.LITERAL and all(later is C.LITERAL for later, _ in items[k + 1 :]):
            char: str | None = chr(av)
        elif op is C.ASSERT and k == len(items) - 1:
            char = _looked_for(av)
        else:
            continue
        if char is None:
            continue
        before = _consumed(items[:k])
        return before is not None and char not in before
    return False


def _consumed(items: list) -> set[str] | None:
    """The ASCII characters a match of ``items`` may consume (None: unknown)."""
    found: set[str] = set()
    for op, av in items:
        if op in (C.AT, C.ASSERT, C.ASSERT_NOT):
            continue  # zero width
        if op is C.LITERAL:
            found.add(chr(av))
        elif op is C.IN:
            chars = _single_class([(op, av)])
            if chars is None:
                return None
            found |= chars
        elif op in (C.NOT_LITERAL, C.ANY):
            found |= set(_ASCII)
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT, C.SUBPATTERN, C.ATOMIC_GROUP, C.BRANCH):
            if op is C.BRANCH:
                parts = [list(b) for b in av[1]]
            elif op is C.SUBPATTERN:
                parts = [list(av[3])]
            elif op is C.ATOMIC_GROUP:
                parts = [list(av)]
            else:
                parts = [list(av[2])]
            for part in parts:
                inner = _consumed(part)
                if inner is None:
                    return None
                found |= inner
        else:
            return None
    return found


def _unwrap(items: list) -> list:
    while len(items) == 1 and items[0][0] in (C.SUBPATTERN, C.ATOMIC_GROUP):
        op, av = items[0]
        items = list(av[3]) if op is C.SUBPATTERN else list(av)
    return items


def _literal_text(items: list) -> str | None:
    items = _unwrap(items)
    if all(op is C.LITERAL for op, _ in items):
        return "".join(chr(av) for _, av in items)
    return None


def _width(items: list) -> int | None:
    """The one length every match of ``items`` has (None: variable or unknown)."""
    total = 0
    for op, av in items:
        if op in (C.LITERAL, C.NOT_LITERAL, C.ANY, C.IN):
            total += 1
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            low, high, sub = av
            inner = _width(list(sub))
            if inner is None or low != high:
                return None
            total += low * inner
        elif op is C.SUBPATTERN:
            inner = _width(list(av[3]))
            if inner is None:
                return None
            total += inner
        elif op is C.ATOMIC_GROUP:
            inner = _width(list(av))
            if inner is None:
                return None
            total += inner
        else:
            return None
    return total


def _single_class(items: list) -> set[str] | None:
    """The ASCII characters one single-character item matches (None: not a one-character item)."""
    if len(items) != 1:
        return None
    op, av = items[0]
    if op is C.LITERAL:
        return {chr(av)}
    if op is C.IN:
        negate = bool(av) and av[0][0] is C.NEGATE
        chars: set[str] = set()
        for sop, sav in av[1:] if negate else av:
            if sop is C.LITERAL:
                chars.add(chr(sav))
            elif sop is C.RANGE:
                chars.update(chr(i) for i in range(sav[0], min(sav[1], 127) + 1))
            elif sop is C.CATEGORY and sav in _CATEGORY_CHARS:
                chars.update(_CATEGORY_CHARS[sav])
            else:
                return None
        return set(_ASCII) - chars if negate else chars & set(_ASCII)
    return None


def _first_chars(item) -> set[str] | None:
    """The characters a match of ``item`` can start with (None: unknown or possibly empty)."""
    op, av = item
    if item is _END or item is _UNKNOWN:
        return None
    if op is C.LITERAL:
        return {chr(av)}
    if op is C.IN:
        return _single_class([item])
    if op in (C.ATOMIC_GROUP,):
        return _first_chars(av[0]) if av else None
    if op is C.SUBPATTERN:
        sub = list(av[3])
        return _first_chars(sub[0]) if sub else None
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
        low, _, sub = av
        sub = list(sub)
        return _first_chars(sub[0]) if low >= 1 and sub else None
    if op is C.BRANCH:
        found: set[str] = set()
        for branch in av[1]:
            branch = list(branch)
            first = _first_chars(branch[0]) if branch else None
            if first is None:
                return None
            found |= first
        return found
    return None


def first_char_elsewhere(pattern: str) -> bool:
    """True unless ``pattern`` starts with a literal character that nothing after it can match
    (then a match can start at one place only among overlapping candidates)."""
    try:
        items = _flatten(list(P.parse(pattern)))
    except (re.error, _Untranslatable):
        return True
    if not items or items[0][0] is not C.LITERAL:
        return True
    first = chr(items[0][1])
    for op, av in items[1:]:
        if op is C.LITERAL:
            if chr(av) == first:
                return True
        elif op is C.IN:
            chars = _single_class([(op, av)])
            if chars is None or first in chars:
                return True
        elif op is C.AT:
            continue
        else:
            return True
    return False


def _flatten(items: list) -> list:
    """Single-character items and anchors in order, through groups and repeats (else raises)."""
    out = []
    for op, av in items:
        if op in (C.LITERAL, C.IN, C.AT):
            out.append((op, av))
        elif op is C.SUBPATTERN:
            out.extend(_flatten(list(av[3])))
        elif op is C.ATOMIC_GROUP:
            out.extend(_flatten(list(av)))
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            out.extend(_flatten(list(av[2])))
        elif op is C.BRANCH:
            for branch in av[1]:
                out.extend(_flatten(list(branch)))
        else:
            raise _Untranslatable(str(op))
    return out
