"""Bytes of one log file → numbered text lines, with every unreadable line accounted for.

Never raises on content: gzip streams that end early or are corrupt, invalid UTF-8, binary
garbage and oversized lines all come back as numbered problems that become quarantine rows.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from typing import Iterator

GZIP_MAGIC = b"\x1f\x8b"
DEFAULT_MAX_LINE_BYTES = 1 << 20  # 1 MiB: longer lines are quarantined (raw kept up to RAW_KEEP)
RAW_KEEP = 64 << 10
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass(slots=True)
class Line:
    """One physical line: ``text`` is None when ``problem`` says why it could not be read."""

    line_no: int
    text: str | None
    crlf: bool = False
    problem: str | None = None
    raw: str | None = None  # what to show for a problem line


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
        whole_ok = _CONTROL.search(text) is None and "\x1b" not in text
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
        crlf = chunk.endswith(b"\r")
        if crlf:
            chunk = chunk[:-1]
        if len(chunk) > max_line_bytes:
            yield Line(
                number,
                None,
                crlf,
                f"line of {len(chunk)} bytes exceeds the {max_line_bytes}-byte limit (first {RAW_KEEP} bytes kept)",
                chunk[:RAW_KEEP].decode("utf-8", "backslashreplace"),
            )
            continue
        try:
            line = chunk.decode("utf-8")
        except UnicodeDecodeError as err:
            yield Line(
                number, None, crlf, f"invalid UTF-8 at byte {err.start}", chunk.decode("utf-8", "backslashreplace")
            )
            continue
        if "\x1b" in line:
            line = _ANSI.sub("", line)
        if _CONTROL.search(line):
            yield Line(
                number,
                None,
                crlf,
                "binary content (control bytes in a text line)",
                chunk.decode("utf-8", "backslashreplace"),
            )
            continue
        yield Line(number, line, crlf)
    if info.get("read_error"):
        yield Line(number + 1, None, False, info["read_error"], "")


def _clean_lines(text: str, may_be_too_long: bool, max_line_bytes: int):
    """The common case (valid UTF-8, no control bytes, no ANSI codes): split the decoded text
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
