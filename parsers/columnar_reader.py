"""Bytes of whole lines → one column of line texts, the reader's per-line semantics column-wise.

``reader.py`` is the reference (its module docstring lists the seven per-line steps). Here the
common case is done for all lines at once: newline offsets from numpy, one trailing ``\\r``
removed, and the texts become one column of Arrow string views over the bytes themselves, line
ends left out (no copy, no Python string per line). Only the lines that need a per-line decision go through the
reference's own ``_line``: a line over the size limit, invalid UTF-8, a byte-order mark at the
start, or any control character (which includes ESC, so every ANSI escape). Their results
replace those lines, so every line is exactly what ``read_lines`` makes of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import polars as pl
import pyarrow as pa

from .reader import Line, _line


@dataclass
class LineBlock:
    """Consecutive lines of one file. ``text`` is null where the reader could not read the line
    (``problems`` says why); ``bom``/``ansi``/``control`` are the repairs of steps 5-7."""

    text: pl.Series
    line_no: np.ndarray  # int64
    crlf: np.ndarray  # bool
    bom: np.ndarray  # bool
    ansi: np.ndarray  # int64
    control: np.ndarray  # int64
    problems: dict[int, tuple[str, str]] = field(default_factory=dict)  # index -> (problem, raw)
    _texts: list | None = None
    _some: dict[int, str | None] = field(default_factory=dict)  # index -> text, of the lines asked for

    def __len__(self) -> int:
        return len(self.line_no)

    @property
    def repaired(self) -> bool:
        return bool(self.bom.any() or self.ansi.any() or self.control.any())

    def texts(self) -> list:
        """The texts as Python strings (None for unreadable lines), made once on demand."""
        if self._texts is None:
            self._texts = self.text.to_list()
        return self._texts

    def texts_at(self, indices: np.ndarray) -> list:
        """The texts of the given lines only (a block's records never need theirs as Python
        strings), kept for ``line``."""
        found = self.text.gather(indices).to_list()
        self._some.update(zip(indices.tolist(), found))
        return found

    def _text(self, i: int) -> str | None:
        if self._texts is not None:
            return self._texts[i]
        if i not in self._some:
            self._some[i] = self.text[i]
        return self._some[i]

    def line(self, i: int) -> Line:
        """Line ``i`` as the reference reader makes it."""
        problem = self.problems.get(i)
        if problem is not None:
            return Line(int(self.line_no[i]), None, bool(self.crlf[i]), problem[0], problem[1])
        return Line(
            int(self.line_no[i]),
            self._text(i),
            bool(self.crlf[i]),
            bom=bool(self.bom[i]),
            ansi=int(self.ansi[i]),
            control=int(self.control[i]),
        )


def line_bounds(buf: np.ndarray, final: bool) -> tuple[np.ndarray, np.ndarray]:
    """(start, end) byte offsets of each line, ends excluding ``\\n``. Without ``final`` the bytes
    after the last ``\\n`` are not a line yet (the caller reads on); with it they are the last line."""
    newlines = np.flatnonzero(buf == 10)
    starts = np.empty(len(newlines) + 1, np.int64)
    starts[0] = 0
    starts[1:] = newlines + 1
    ends = np.empty(len(newlines) + 1, np.int64)
    ends[:-1] = newlines
    ends[-1] = len(buf)
    if not final or starts[-1] == len(buf):  # nothing after the last newline
        starts, ends = starts[:-1], ends[:-1]
    return starts, ends


# control characters: the bytes below 32 but these (tab, newline, carriage return), and 127
_ALLOWED_LOW = (9, 10, 13)
_CONTROL = "[\\x00-\\x08\\x0B\\x0C\\x0E-\\x1F\\x7F]"  # reader._CONTROL, column-wise


def read_block(data: bytes | memoryview, first_line_no: int, max_line_bytes: int, final: bool = True) -> LineBlock:
    """Lines of ``data`` (whole lines; see ``line_bounds``), numbered from ``first_line_no``. A
    memoryview of a larger buffer is read in place (the text column refers to it, no copy)."""
    buf = np.frombuffer(data, np.uint8)
    starts, ends = line_bounds(buf, final)
    n = len(starts)
    undecodable = np.zeros(n, bool)
    if not _valid_utf8(data):
        high = np.unique(np.searchsorted(starts, np.flatnonzero(buf >= 128), "right") - 1)
        undecodable[high] = ~_decodable(data, starts[high], ends[high])
        if undecodable.any():  # blank them out (same length) so the column is valid UTF-8
            patched = bytearray(data)
            for i in np.flatnonzero(undecodable).tolist():
                patched[starts[i] : ends[i]] = b" " * int(ends[i] - starts[i])
            data = bytes(patched)
    text, crlf = _text_column(np.frombuffer(data, np.uint8), starts, ends, data)
    # the lines the reference reader must decide one by one
    care = undecodable | (ends - starts - crlf > max_line_bytes)
    if _has_control(buf):
        care |= text.str.contains(_CONTROL).to_numpy()
    if n and (buf[starts] == 0xEF).any():
        care |= text.str.starts_with("\ufeff").to_numpy()
    line_no = np.arange(first_line_no, first_line_no + n, dtype=np.int64)
    block = LineBlock(
        text=text,
        line_no=line_no,
        crlf=crlf,
        bom=np.zeros(n, bool),
        ansi=np.zeros(n, np.int64),
        control=np.zeros(n, np.int64),
    )
    careful = np.flatnonzero(care)
    if careful.size:
        original = bytes(buf) if undecodable.any() else data
        values = []
        for i in careful.tolist():
            line = _line(int(line_no[i]), bytes(original[starts[i] : ends[i]]), max_line_bytes)
            values.append(line.text)
            if line.text is None:
                block.problems[i] = (line.problem or "", line.raw or "")
            block.crlf[i], block.bom[i], block.ansi[i], block.control[i] = line.crlf, line.bom, line.ansi, line.control
        block.text = block.text.scatter(careful, pl.Series(values, dtype=pl.String))
    return block


_INLINE = 12  # Arrow's string view: a string up to this many bytes is held in its view itself
_VIEW_BYTES = 1 << 31  # a view's offset into its data buffer is a signed 32-bit number


def _text_column(
    buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, data: bytes | memoryview
) -> tuple[pl.Series, np.ndarray]:
    """The lines (``starts``/``ends`` exclude the newline; one trailing ``\\r`` is cut too, and
    reported) as one string column over ``data`` itself: an Arrow string view per line (length,
    then the text if it is short, else its first bytes and its offset in ``data``), which Polars
    takes as it is. No copy of the text is made, and none is needed to cut the line ends."""
    n = len(starts)
    lengths = ends - starts
    crlf = np.zeros(n, bool)
    filled = np.flatnonzero(lengths)
    crlf[filled] = buf[ends[filled] - 1] == 13
    lengths -= crlf
    if len(buf) >= _VIEW_BYTES:  # each line with its newline, both cut
        offsets = np.append(starts, min(ends[-1] + 1, len(buf)))
        array = pa.Array.from_buffers(pa.large_string(), n, [None, pa.py_buffer(offsets.tobytes()), pa.py_buffer(data)])
        return pl.Series("text", array).str.strip_suffix("\n").str.strip_suffix("\r"), crlf
    views = np.zeros((n, 16), np.uint8)
    window = buf[np.minimum(starts[:, None] + np.arange(_INLINE), len(buf) - 1)]
    window[np.arange(_INLINE)[None, :] >= lengths[:, None]] = 0
    views[:, 4:] = window
    words = views.view(np.int32)
    words[:, 0] = lengths
    long = lengths > _INLINE
    words[long, 2] = 0  # the one data buffer
    words[long, 3] = starts[long]
    array = pa.Array.from_buffers(pa.string_view(), n, [None, pa.py_buffer(views), pa.py_buffer(data)])
    return pl.Series("text", array), crlf


def _has_control(buf: np.ndarray, step: int = 1 << 20) -> bool:
    """Whether any byte is a control character (read in steps: no temporary the size of ``buf``): the
    bytes below 32 are all tabs, newlines and carriage returns, and none is 127. Counting compares
    (each one pass at memory speed) costs half of picking the low bytes out to look them up."""
    for start in range(0, len(buf), step):
        piece = buf[start : start + step]
        allowed = sum(np.count_nonzero(piece == byte) for byte in _ALLOWED_LOW)
        if np.count_nonzero(piece < 32) != allowed or np.count_nonzero(piece == 127):
            return True
    return False


def _valid_utf8(data: bytes | memoryview) -> bool:
    offsets = np.array([0, len(data)], np.int64).tobytes()
    whole = pa.Array.from_buffers(pa.large_string(), 1, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    try:
        whole.validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True


def _decodable(data: bytes | memoryview, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    ok = np.ones(len(starts), bool)
    for k, (s, e) in enumerate(zip(starts.tolist(), ends.tolist())):
        try:
            bytes(data[s:e]).decode("utf-8")
        except UnicodeDecodeError:
            ok[k] = False
    return ok
