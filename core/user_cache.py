"""A private, per-user cache directory for things that cost seconds to build and never change
between runs of the same installation (the compiled grammar).

Why private: what is cached is loaded with ``pickle``, and loading a file someone else can write
runs their code. So each kind of entry has a directory of the user's own, created ``0700``,
inside a root that only the user may write; either is refused (no cache, never an error) if it
has another owner, looser permissions, or is a symbolic link. Everything cached is also keyed by
the content it was built from, so a stale entry is never read: a changed input gives a new key.
Entries are written whole (temporary file + rename), so concurrent runs never see half of one.

Location: ``$KAFKA_FORENSICS_CACHE_DIR`` if set (``off`` or empty disables caching), else
``$XDG_CACHE_HOME/kafka-forensics``, else ``~/.cache/kafka-forensics``. On a cluster each
executor machine keeps its own; a container without a writable home simply builds every time.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Optional

ENV = "KAFKA_FORENSICS_CACHE_DIR"
_DISABLED = ("", "off", "none", "0")
MAX_ENTRIES = 64  # per kind; the oldest go first (a grammar edit leaves its previous build behind)


def cache_root() -> Optional[Path]:
    """The configured root (not created), or None when caching is switched off."""
    configured = os.environ.get(ENV)
    if configured is not None:
        return None if configured.strip().lower() in _DISABLED else Path(configured).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "kafka-forensics"


def _ours(path: Path, forbidden: int) -> bool:
    """True if ``path`` is a real directory (not a link) owned by us without the ``forbidden`` mode bits."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & forbidden


def private_dir(kind: str) -> Optional[Path]:
    """``<root>/<kind>``, created 0700 if missing; None if caching is off or the place is unsafe."""
    root = cache_root()
    if root is None or not hasattr(os, "getuid"):
        return None
    directory = root / kind
    try:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        directory.mkdir(mode=0o700, exist_ok=True)
    except OSError:
        return None
    # The root may be shared by other tools of ours (readable, never writable by others); each
    # kind's directory is private.
    return directory if _ours(root, 0o022) and _ours(directory, 0o077) else None


def read_entry(directory: Path, name: str) -> Optional[bytes]:
    """An entry's bytes, or None if it is missing or not a regular file of ours."""
    path = directory / name
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            return None
        return path.read_bytes()
    except OSError:
        return None


def write_entry(directory: Path, name: str, data: bytes) -> None:
    """Write an entry whole (temp file + rename: a concurrent reader sees all of it or nothing),
    then drop the oldest entries beyond ``MAX_ENTRIES``. Failures are ignored: a cache is optional."""
    try:
        handle, temporary = tempfile.mkstemp(dir=directory, prefix=".tmp-")
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
            os.replace(temporary, directory / name)
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)
    except OSError:
        return
    prune(directory, MAX_ENTRIES)


def prune(directory: Path, keep: int) -> None:
    """Delete all but the ``keep`` newest entries (hidden temporary files are left to their
    writers). Failures are ignored: a concurrent run may have removed an entry first."""
    try:
        entries = sorted(directory.glob("[!.]*"), key=lambda p: p.stat().st_mtime)
        for old in entries[: max(0, len(entries) - keep)]:
            old.unlink(missing_ok=True)
    except OSError:
        return
