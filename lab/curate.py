"""Cut a recorded cluster's files down to the incident: the window's lines, the files that matter.

Logs are cut at the end of the window (the ``end`` snapshot): everything before it is kept from the
first line (cluster start), so line numbers are those Kafka wrote and the replay sees each
partition from its creation. A record's continuation lines (a stack trace) go with it. The
metadata dump is cut at the first batch created after the window.
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path
from typing import Iterable

from .run import line_ms

LOG_NAMES = ("state-change.log", "controller.log", "server.log")  # the files the tool reads
_BATCH_TIME = re.compile(r"^baseOffset: \d+ .* CreateTime: (\d+)")


def log_files(logs: Path) -> list[Path]:
    """The kept log files of one broker, rotated hours (``server.log.2024-03-04-10``) included."""
    out = []
    for name in LOG_NAMES:
        out += sorted(p for p in logs.glob(name + "*") if p.is_file())
    return out


def cut_log(lines: Iterable[str], end_ms: int) -> list[str]:
    """Lines up to the first record logged after ``end_ms`` (continuation lines follow their record)."""
    out = []
    for line in lines:
        ms = line_ms(line)
        if ms is not None and ms > end_ms:
            break
        out.append(line)
    return out


def cut_metadata_dump(text: str, end_ms: int) -> str:
    out = []
    for line in text.splitlines():
        m = _BATCH_TIME.match(line)
        if m and int(m.group(1)) > end_ms:
            break
        out.append(line)
    return "\n".join(out) + "\n"


def write_text(path: Path, lines: list[str], compress: bool) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = ("\n".join(lines) + "\n").encode("utf-8") if lines else b""
    if compress:
        path = path.with_name(path.name + ".gz")
        with gzip.GzipFile(path, "wb", mtime=0) as gz:  # mtime 0: the same bytes for the same lines
            gz.write(data)
    else:
        path.write_bytes(data)
    return path


COMPRESSED = LOG_NAMES  # every log gzipped (the tool reads .gz): the recorded incidents stay a few MB in all


def curate_broker(logs: Path, dest: Path, end_ms: int, compress: Iterable[str] = COMPRESSED) -> dict[str, str]:
    """Copy one broker's files cut at ``end_ms``; ``{original relative name: written name}``."""
    names = {}
    zipped = tuple(compress)
    for path in log_files(logs):
        lines = cut_log(path.read_text(encoding="utf-8", errors="replace").splitlines(), end_ms)
        written = write_text(dest / path.name, lines, path.name.startswith(zipped))
        names[path.name] = written.name
    return names
