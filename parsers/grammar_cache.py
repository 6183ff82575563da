"""Lark parsers built once per machine, not once per process.

Building the LALR tables of the all-eras grammar is most of a parse task's start-up (about
1.3 s of CPU for ``auto``, 0.25 s for one dialect, on the 2-core CI machine), and every Python
worker of every run paid it again. Lark can save a built parser and load it back
(``Lark.save`` / ``Lark.load``, its public API) in a fraction of that, so each parser is saved
once into the user's private cache directory (``core/user_cache.py``) and loaded afterwards.

The entry's name is a hash of everything the parser is built from: the grammar text (itself
assembled from the ``.lark`` files, the dialect and the layout), the Lark options, Lark's
version and Python's. Editing a grammar file, upgrading Lark or changing a layout therefore
selects another entry; an entry is never trusted for a grammar it was not built from. An entry
that does not load (truncated by a full disk, from another build) is rebuilt and replaced.
"""

from __future__ import annotations

import hashlib
import io
import sys
from typing import Any

import lark
from lark import Lark

from kafka_forensics.core.user_cache import private_dir, read_entry, write_entry

_KIND = "grammar"
_FORMAT = 1  # bump if what is saved changes meaning


def cache_key(text: str, options: dict[str, Any]) -> str:
    """The entry name for a grammar text built with ``options``."""
    digest = hashlib.sha256()
    for part in (str(_FORMAT), lark.__version__, "%d.%d" % sys.version_info[:2], repr(sorted(options.items())), text):
        digest.update(part.encode("utf-8"))
        digest.update(b"\0")
    return f"lark-{digest.hexdigest()}.bin"


def cached_lark(text: str, **options: Any) -> Lark:
    """``Lark(text, **options)``, loaded from the cache when this exact grammar was built before."""
    directory = private_dir(_KIND)
    if directory is None:
        return Lark(text, **options)
    name = cache_key(text, options)
    saved = read_entry(directory, name)
    if saved is not None:
        try:
            return Lark.load(io.BytesIO(saved))
        except Exception:  # any unreadable entry is rebuilt below
            pass
    parser = Lark(text, **options)
    buffer = io.BytesIO()
    parser.save(buffer)
    write_entry(directory, name, buffer.getvalue())
    return parser
