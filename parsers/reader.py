"""Bytes of one log file → numbered text lines, with every unreadable line accounted for.

Never raises on content: gzip streams that end early or are corrupt, invalid UTF-8, binary
garbage and oversized lines all come back as numbered problems that become quarantine rows.

Per-line semantics (the contract a column-wise reader must reproduce; ``read_lines`` is the
reference). For the whole file: if it starts with the gzip magic, inflate every member (what could
be inflated is read; the reason it stopped is one extra problem line after the last line). Then:

1. Lines are the bytes split at ``\n`` only; a last piece without ``\n`` is a line, the empty
   piece after a final ``\n`` is not. ``line_no`` is 1 + the number of ``\n`` before the line.
   No other byte ends a line (``\r``, ``\v``, ``\f``, ``\x1c``-``\x1e``, NEL, U+2028 do not).
2. One trailing ``\r`` is removed: ``crlf``.
3. A line longer than ``max_line_bytes`` (after 2) is a problem ("line of N bytes exceeds ...").
4. Bytes that are not UTF-8 make the line a problem ("invalid UTF-8 at byte N").
5. One U+FEFF (byte-order mark) at the start of the line is removed: ``bom`` (editors and
   Windows tools write one at the start of a file; ``cat`` of such files puts it mid-file).
6. ANSI escape sequences (ECMA-48 CSI ``ESC [ ... final``, OSC ``ESC ] ... BEL`` or ``... ESC backslash``, and
   two-character ``ESC x``), which ``docker logs`` / ``kubectl logs`` / colouring appenders add, are
   removed: ``ansi`` = how many.
7. What is left may hold control characters (C0 except ``\t``, ``\n``, ``\r``; and DEL). If they
   are more than half of the line's characters the line is binary, a problem ("binary content");
   otherwise the line is text kept exactly as written, and ``control`` = how many.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from typing import Iterator

GZIP_MAGIC = b"\x1f\x8b"
DEFAULT_MAX_LINE_BYTES = 1 << 20  # 1 MiB: longer lines are quarantined (raw kept up to RAW_KEEP)
RAW_KEEP = 64 << 10
BOM = "\ufeff"
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[ -/]*[0-~])")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_NEEDS_CARE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufeff]")  # steps 5-7 have work to do


@dataclass(slots=True)
class Line:
    """One physical line: ``text`` is None when ``problem`` says why it could not be read.

    ``bom``, ``ansi`` and ``control`` record what steps 5-7 of the module docstring removed or kept."""

    line_no: int
    text: str | None
    crlf: bool = False
    problem: str | None = None
    raw: str | None = None  # what to show for a problem line
    bom: bool = False
    ansi: int = 0
    control: int = 0


def _decompress(data: bytes) -> tuple[bytes, str | None]:
    """Whole gzip payload (all members), or what could be inflated plus why it stopped."""
    out = bytearray()
    rest = data
    while rest:
        inflater = zlib.decompressobj(wbits=31)
        try:
            out += inflater.decompress(rest)
        except zlib.error as err:
            return bytes(out), f"gzip stream corrupt after {len(out)} bytes ({err})"
        if not inflater.eof:
            out += inflater.flush()
            return bytes(out), f"gzip stream truncated after {len(out)} bytes (file ends mid-stream)"
        rest = inflater.unused_data
        if rest and rest[:2] != GZIP_MAGIC:
            return bytes(out), f"{len(rest)} trailing bytes after the gzip stream are not gzip"
    return bytes(out), None


def read_lines(data: bytes, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> tuple[Iterator[Line], dict]:
    """Split a file's bytes into lines; the dict reports compression and read problems."""
    info: dict = {"compressed": False, "read_error": None}
    if data[:2] == GZIP_MAGIC:
        info["compressed"] = True
        data, info["read_error"] = _decompress(data)
    return _lines(data, max_line_bytes, info), info


def _lines(data: bytes, max_line_bytes: int, info: dict) -> Iterator[Line]:
    try:
        text = data.decode("utf-8")
        whole_ok = _NEEDS_CARE.search(text) is None
    except UnicodeDecodeError:
        whole_ok = False
    number = 0
    if whole_ok:
        number = yield from _clean_lines(text, len(data) > max_line_bytes, max_line_bytes)
        chunks = []
    else:
        chunks = data.split(b"\n")
        if chunks and chunks[-1] == b"":
            chunks.pop()
    for number, chunk in enumerate(chunks, start=1):
        yield _line(number, chunk, max_line_bytes)
    if info.get("read_error"):
        yield Line(number + 1, None, False, info["read_error"], "")


def _line(number: int, chunk: bytes, max_line_bytes: int) -> Line:
    """Steps 2-7 of the module docstring for one line's bytes."""
    crlf = chunk.endswith(b"\r")
    if crlf:
        chunk = chunk[:-1]
    if len(chunk) > max_line_bytes:
        return Line(
            number,
            None,
            crlf,
            f"line of {len(chunk)} bytes exceeds the {max_line_bytes}-byte limit (first {RAW_KEEP} bytes kept)",
            chunk[:RAW_KEEP].decode("utf-8", "backslashreplace"),
        )
    try:
        line = chunk.decode("utf-8")
    except UnicodeDecodeError as err:
        return Line(number, None, crlf, f"invalid UTF-8 at byte {err.start}", chunk.decode("utf-8", "backslashreplace"))
    bom = line.startswith(BOM)
    if bom:
        line = line[1:]
    ansi = 0
    if "\x1b" in line:
        line, ansi = _ANSI.subn("", line)
    control = len(_CONTROL.findall(line))
    if control * 2 > len(line):
        return Line(
            number,
            None,
            crlf,
            f"binary content ({control} of {len(line)} characters are control characters)",
            chunk.decode("utf-8", "backslashreplace"),
        )
    return Line(number, line, crlf, bom=bom, ansi=ansi, control=control)


def _clean_lines(text: str, may_be_too_long: bool, max_line_bytes: int):
    """The common case (valid UTF-8, no control bytes, no ANSI codes, no BOM): split the decoded text
    once instead of decoding line by line. Same lines, numbers and problems as ``_lines``;
    returns the number of lines."""
    pieces = text.split("\n")
    if pieces[-1] == "":
        pieces.pop()
    # a line's UTF-8 size is at most 4 bytes per character: only long ones need measuring
    long_chars = max_line_bytes // 4
    for number, piece in enumerate(pieces, start=1):
        crlf = piece.endswith("\r")
        if crlf:
            piece = piece[:-1]
        if may_be_too_long and len(piece) > long_chars:
            size = len(piece.encode("utf-8"))
            if size > max_line_bytes:
                raw = piece.encode("utf-8")[:RAW_KEEP].decode("utf-8", "backslashreplace")
                yield Line(
                    number,
                    None,
                    crlf,
                    f"line of {size} bytes exceeds the {max_line_bytes}-byte limit (first {RAW_KEEP} bytes kept)",
                    raw,
                )
                continue
        yield Line(number, piece, crlf)
    return len(pieces)


def repair_counts(lines: list[Line]) -> dict[str, int]:
    """Per-file counts of what steps 5-7 did (the ``files`` table's bom/ansi/control columns)."""
    return {
        "bom_lines": sum(1 for ln in lines if ln.bom),
        "ansi_lines": sum(1 for ln in lines if ln.ansi),
        "control_lines": sum(1 for ln in lines if ln.control),
    }
