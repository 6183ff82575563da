"""One sentence from a Spark / Py4J error, for the message a user sees (``--debug`` shows all).

Why: a failed Spark action's text starts with Py4J's own line ("An error occurred while calling
o99.parquet.") and buries the reason under the stack traces of every task attempt; the reason
is the innermost ``Caused by: SomeException: message``.
"""

from __future__ import annotations

import re

_CAUSE = re.compile(r"^\s*Caused by: [\w.$]+(?:Exception|Error): (?P<message>.+)$")
_FIRST = re.compile(r"^\s*:?\s*[\w.$]+(?:Exception|Error): (?P<message>.+)$")
# A Python worker's traceback inside the Java error: its last line names the Python exception.
_TRACEBACK = "Traceback (most recent call last):"
_PY_EXCEPTION = re.compile(r"^(?P<name>[A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit)): (?P<message>.+)$")


def short_error(err: BaseException, limit: int = 500) -> str:
    """The Python worker's exception, else the innermost cause's message, else the first
    exception message, else the first line."""
    lines = str(err).strip().splitlines()
    if not lines:
        return type(err).__name__
    if any(_TRACEBACK in line for line in lines):
        python = _python_worker_error(lines)
        if python:
            return python[:limit]
    causes = [m.group("message") for m in map(_CAUSE.match, lines) if m]
    if causes:
        return causes[-1].strip()[:limit]
    if lines[0].startswith("An error occurred while calling"):
        for line in lines[1:]:
            m = _FIRST.match(line)
            if m:
                return m.group("message").strip()[:limit]
    return lines[0][:limit]


def _python_worker_error(lines: list[str]) -> str | None:
    """``ValueError: ... (in a Python worker)`` from the first traceback in the text: its
    exception line is the first unindented ``Name: message`` line after the traceback starts."""
    start = next(i for i, line in enumerate(lines) if _TRACEBACK in line)
    for line in lines[start + 1 :]:
        m = _PY_EXCEPTION.match(line)
        if m:
            return f"{m.group('name')}: {m.group('message').strip()} (in a Python worker)"
        if line.startswith("\tat "):  # the Java frames after the traceback: no exception line
            return None
    return None
