"""The reader's two ways of splitting a file give the same lines.

A clean file (valid UTF-8, no control bytes) is decoded once and split as text; anything else is
split as bytes and decoded line by line. Appending one control byte forces the second way, so
the two can be compared on the same content.
"""

from __future__ import annotations

import gzip
from pathlib import Path

from kafka_forensics.parsers.reader import read_lines
from tests.support.paths import REAL_LOGS


def _lines(data: bytes, max_line_bytes: int = 1 << 20) -> list[tuple]:
    lines, _ = read_lines(data, max_line_bytes)
    return [(ln.line_no, ln.text, ln.crlf, ln.problem, ln.raw) for ln in lines]


def _both_ways(data: bytes, max_line_bytes: int = 1 << 20) -> tuple[list[tuple], list[tuple]]:
    clean = _lines(data, max_line_bytes)
    forced = _lines(data + (b"" if data.endswith(b"\n") or not data else b"\n") + b"\x01\n", max_line_bytes)
    assert forced[-1][3].startswith("binary content")
    return clean, forced[:-1]


def test_every_real_log_splits_the_same_both_ways():
    files = sorted(Path(REAL_LOGS).glob("*.log"))
    assert files
    for path in files:
        clean, forced = _both_ways(path.read_bytes())
        assert clean == forced, path.name


def test_crlf_multibyte_and_oversized_lines_split_the_same_both_ways():
    data = (
        "[2024-03-04 10:00:00,001] INFO ok (kafka.server.KafkaServer)\r\n"
        + "é" * 40
        + "\n"  # 80 bytes: under the limit
        + "é" * 60
        + "\r\n"  # 120 bytes, 60 characters: over the limit
        + "x" * 101
        + "\n"  # 101 bytes: over the limit
        + "no newline at the end"
    ).encode()
    clean, forced = _both_ways(data, max_line_bytes=100)
    assert clean == forced
    assert [ln[3] is not None for ln in clean] == [False, False, True, True, False]
    assert clean[2][3].startswith("line of 120 bytes exceeds the 100-byte limit")
    assert clean[2][2] is True  # the CRLF is still recorded on an oversized line


def test_truncated_gzip_still_reports_the_read_error_after_clean_lines():
    packed = gzip.compress(b"".join(f"line {i}\n".encode() for i in range(2000)))
    lines, info = read_lines(packed[: len(packed) // 2])
    lines = list(lines)
    assert info["read_error"] and "truncated" in info["read_error"]
    assert lines[-1].text is None and lines[-1].problem == info["read_error"]
    assert lines[-1].line_no == len(lines)
    assert all(ln.text is not None for ln in lines[:-2])
