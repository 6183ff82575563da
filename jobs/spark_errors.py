"""One sentence from a Spark / Py4J error, for the message a user sees (``--debug`` shows all).

Why: a failed Spark action's text starts with Py4J's own line ("An error occurred while calling
o99.parquet.") and buries the reason under the stack traces of every task attempt; the reason
is the innermost ``Caused by: SomeException: message``.
"""

from __future__ import annotations

import re

_CAUSE = re.compile(r"^\s*Caused by: [\w.$]+(?:Exception|Error): (?P<message>.+)$")
_FIRST = re.compile(r"^\s*:?\s*[\w.$]+(?:Exception|Error): (?P<message>.+)$")


def short_error(err: BaseException, limit: int = 500) -> str:
    """The innermost cause's message, else the first exception message, else the first line."""
    lines = str(err).strip().splitlines()
    if not lines:
        return type(err).__name__
    causes = [m.group("message") for m in map(_CAUSE.match, lines) if m]
    if causes:
        return causes[-1].strip()[:limit]
    if lines[0].startswith("An error occurred while calling"):
        for line in lines[1:]:
            m = _FIRST.match(line)
            if m:
                return m.group("message").strip()[:limit]
    return lines[0][:limit]
