"""How every table-printing command prints: ``--format table|text|json|csv``, one renderer for all.

``table`` is a rich table for a person at a terminal; when stdout is not a terminal (``| less``,
``> file``, a scheduler) rich would wrap each cell at 80 columns and break a topic name or a
``file:line`` over many lines, so the default there is ``text``: one line per row, never wrapped,
``Name: value`` pairs separated by tabs (the shape of ``kafka-topics --describe``), grep- and
cut-friendly. ``json`` and ``csv`` are for scripts: the column names of each ``Listing`` are its
documented, stable contract (README "Output formats"); rows keep the order the command gives them.

A command builds its ``Listing`` objects (plain values: str, int, bool, None, datetime, lists) and
calls ``emit``; it never formats for one output itself.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import sys
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

import click

FORMATS = ("table", "text", "json", "csv")


def format_option(func: Callable) -> Callable:
    return click.option(
        "--format",
        "output_format",
        type=click.Choice(FORMATS),
        default=None,
        help="table (default on a terminal), text (default when piped: one line per row, never wrapped), "
        "json or csv (stable column names, see the README).",
    )(func)


def resolve_format(output_format: Optional[str]) -> str:
    """The format asked for, else ``table`` on a terminal and ``text`` otherwise."""
    if output_format:
        return output_format
    return "table" if sys.stdout.isatty() else "text"


def is_machine(output_format: str) -> bool:
    """json and csv own stdout: everything else a command says goes to stderr."""
    return output_format in ("json", "csv")


@dataclass
class Listing:
    """One printed table: a stable ``name`` and ``columns`` (the json keys and csv header), its rows,
    a ``title`` and ``notes`` for people, and optionally the one-line ``text`` shape of a row."""

    name: str
    columns: tuple[str, ...]
    rows: list[dict] = field(default_factory=list)
    title: Optional[str] = None
    notes: list[str] = field(default_factory=list)
    text: Optional[Callable[[dict], str]] = None
    labels: dict[str, str] = field(default_factory=dict)  # column -> header for people (table, text)

    def label(self, column: str) -> str:
        return self.labels.get(column, column)


# ---- values ------------------------------------------------------------------------------------
def log_time(value: Optional[dt.datetime]) -> str:
    """A timestamp as Kafka's log4j prints it (``2024-03-04 10:06:00,123``), in UTC."""
    if value is None:
        return "?"
    value = value.astimezone(dt.timezone.utc) if value.tzinfo else value
    return value.strftime("%Y-%m-%d %H:%M:%S,") + f"{value.microsecond // 1000:03d}"


def iso_time(value: Optional[dt.datetime]) -> Optional[str]:
    """A timestamp for scripts: ISO 8601 in UTC with milliseconds and ``Z``, as findings.jsonl has it."""
    from kafka_forensics.replay.findings import format_ts

    return format_ts(value)


def human(value) -> str:
    """A cell for people: lists comma-joined, times as log4j prints them, unknown as ``?``."""
    if value is None:
        return "?"
    if isinstance(value, dt.datetime):
        return log_time(value)
    if isinstance(value, (list, tuple)):
        return ",".join(human(v) for v in value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _json_value(value):
    if isinstance(value, dt.datetime):
        return iso_time(value)
    if isinstance(value, (list, tuple)):
        return [_json_value(v) for v in value]
    return value


def _csv_value(value) -> str:
    if value is None:
        return ""
    if isinstance(value, dt.datetime):
        return iso_time(value) or ""
    if isinstance(value, (list, tuple)):
        return ",".join(_csv_value(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def one_line(text: str) -> str:
    """A cell of the ``text`` format never spans lines or holds a tab (log text is untrusted)."""
    return " ".join(str(text).split())


def _no_breaks(line: str) -> str:
    """A row's line keeps its tabs but never breaks (a custom shape may quote untrusted text)."""
    return line.replace("\r", " ").replace("\n", " ")


def text_pairs(row: dict, listing: Listing) -> str:
    """The default ``text`` line: ``Name: value`` pairs joined by tabs, as kafka-topics prints."""
    return "\t".join(f"{listing.label(c)}: {one_line(human(row.get(c)))}" for c in listing.columns)


# ---- rendering ---------------------------------------------------------------------------------
def render_text(listings: Sequence[Listing]) -> str:
    out: list[str] = []
    for listing in listings:
        out += [one_line(n) for n in listing.notes]
        shape = listing.text or (lambda r, _l=listing: text_pairs(r, _l))
        out += [_no_breaks(shape(r)) for r in listing.rows]
    return "\n".join(out)


def render_json(command: str, listings: Sequence[Listing]) -> str:
    """``{"command": C, "notes": [...], "<listing name>": [{column: value}, ...], ...}``."""
    doc: dict = {"command": command, "notes": [n for listing in listings for n in listing.notes]}
    for listing in listings:
        doc[listing.name] = [{c: _json_value(r.get(c)) for c in listing.columns} for r in listing.rows]
    return json.dumps(doc, indent=2, ensure_ascii=False)


def render_csv(listings: Sequence[Listing]) -> str:
    """One header and the rows; several listings share one table with a leading ``table`` column
    (the union of their columns, in first-seen order)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    if len(listings) == 1:
        columns = list(listings[0].columns)
        writer.writerow(columns)
        for r in listings[0].rows:
            writer.writerow([_csv_value(r.get(c)) for c in columns])
        return buf.getvalue().rstrip("\n")
    columns = []
    for listing in listings:
        columns += [c for c in listing.columns if c not in columns]
    writer.writerow(["table", *columns])
    for listing in listings:
        for r in listing.rows:
            writer.writerow([listing.name, *[_csv_value(r.get(c)) if c in listing.columns else "" for c in columns]])
    return buf.getvalue().rstrip("\n")


def print_tables(listings: Sequence[Listing], console) -> None:
    from rich.markup import escape
    from rich.table import Table

    for listing in listings:
        for note in listing.notes:
            console.print(escape(note))
        if not listing.rows:
            continue
        table = Table(title=escape(listing.title) if listing.title else None, show_edge=False)
        for c in listing.columns:
            table.add_column(listing.label(c), overflow="fold")
        for r in listing.rows:
            table.add_row(*[escape(human(r.get(c))) for c in listing.columns])
        console.print(table)


def emit(command: str, listings: Sequence[Listing], output_format: str, console=None) -> None:
    """Print ``listings`` in ``output_format`` on stdout (``console`` for the rich table)."""
    if output_format == "table":
        if console is None:
            from .common import make_console

            console = make_console()
        print_tables(listings, console)
    elif output_format == "json":
        click.echo(render_json(command, listings))
    elif output_format == "csv":
        click.echo(render_csv(listings))
    else:
        text = render_text(listings)
        if text:
            click.echo(text)


__all__ = [
    "FORMATS",
    "Listing",
    "emit",
    "format_option",
    "human",
    "is_machine",
    "iso_time",
    "log_time",
    "one_line",
    "render_csv",
    "render_json",
    "render_text",
    "resolve_format",
]
