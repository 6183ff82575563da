"""``merge --kafka-compat``: exactly what Kafka's ``kafka.tools.StateChangeLogMerger`` printed.

Ported from core/src/main/scala/kafka/tools/StateChangeLogMerger.scala (0.8.0 - 3.9; unchanged in
behaviour from 0.8.2.2 to 3.9.0, deprecated in 3.6, removed in 4.0 by KAFKA-14705, commit 3f2cb55a759):

- a line is kept only if it holds a ``yyyy-MM-dd HH:mm:ss,SSS`` date (the first one found is the
  line's date) inside [start, end] and a ``[topic,N]`` (``\\[(LEGAL_CHARS+),( )*([0-9]+)\\]``, first
  match) whose topic/partition pass --topic/--partitions. Stack traces, ``topic-N`` notation (1.1+)
  and lines about no partition are dropped; the line is printed as is, without its file name.
- the files are merged n-way through ``scala.collection.mutable.PriorityQueue`` (Scala 2.11, the
  Scala of Kafka 1.0's default build), ordered by the date *string*; ties between files come out in
  whatever order that binary heap gives (it is not stable), which ``ScalaPriorityQueue`` reproduces.
  Lines of one file keep their order even when the file's dates go backwards.

Streaming: one line per file is held at a time (the original's own memory bound), so this runs
locally on files of any size; it reads plain or gzipped local files.
"""

from __future__ import annotations

import os
import re
from typing import Callable, Iterator, Optional

from kafka_forensics.core.errors import InputError, UsageError
from kafka_forensics.parsers.reader import read_lines

TOPIC_PARTITION = re.compile(r"\[([a-zA-Z0-9._-]+),( )*([0-9]+)\]")  # Topic.LEGAL_CHARS = "[a-zA-Z0-9._-]"
DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2},[0-9]{3}")
DEFAULT_START, DEFAULT_END = "0000-00-00 00:00:00,000", "9999-12-31 23:59:59,999"


def files_from_regex(logs_regex: str) -> list[str]:
    """``--logs-regex /dir/name-regex``: the directory's entries whose name the regex finds in,
    listed in directory order (Java's File.listFiles and os.listdir both return readdir order)."""
    index = logs_regex.rfind("/") + 1
    directory = "." if index == 0 else logs_regex[: index - 1]
    try:
        name_rx = re.compile(logs_regex[index:])
    except re.error as err:
        raise UsageError(f"--logs-regex is not a valid regex: {err}") from None
    try:
        names = os.listdir(directory or "/")
    except OSError as err:
        raise InputError(f"--logs-regex: cannot list {directory!r}: {err.strerror}") from None
    return [f"{directory}/{name}" for name in names if name_rx.search(name)]


def _date_key(text: str) -> tuple:
    """SimpleDateFormat's fields, for comparing a line's date with the bounds."""
    return (
        int(text[0:4]),
        int(text[5:7]),
        int(text[8:10]),
        int(text[11:13]),
        int(text[14:16]),
        int(text[17:19]),
        int(text[20:23]),
    )


def parse_bound(text: Optional[str], default: str, option: str) -> Optional[tuple]:
    value = (text or default).replace('"', " ").strip()
    if value == default:
        return None  # the original's sentinels: no bound
    if not DATE.fullmatch(value):
        raise UsageError(f"{option} {text!r} is not in the form yyyy-MM-dd HH:mm:ss,SSS")
    return _date_key(value)


class ScalaPriorityQueue:
    """scala.collection.mutable.PriorityQueue (2.11): a 1-based binary max-heap with its exact
    fixUp/fixDown, so that equal elements come out in the same order as in the original."""

    def __init__(self, less: Callable[[object, object], bool]):
        self.less = less
        self.array: list = [None]

    def __len__(self) -> int:
        return len(self.array) - 1

    def enqueue(self, elem) -> None:
        self.array.append(elem)
        k = len(self.array) - 1
        while k > 1 and self.less(self.array[k // 2], self.array[k]):
            self.array[k], self.array[k // 2] = self.array[k // 2], self.array[k]
            k //= 2

    def dequeue(self):
        a = self.array
        last = len(a) - 1
        a[1], a[last] = a[last], a[1]
        n, k = last - 1, 1
        while n >= 2 * k:
            j = 2 * k
            if j < n and self.less(a[j], a[j + 1]):
                j += 1
            if not self.less(a[k], a[j]):  # as(k) >= as(j)
                break
            a[k], a[j] = a[j], a[k]
            k = j
        return a.pop()


def _lines(path: str) -> Iterator[str]:
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as err:
        raise InputError(f"cannot read {path}: {err.strerror}") from None
    lines, _ = read_lines(data)
    for line in lines:
        yield line.text if line.text is not None else (line.raw or "")


def merge_compat(
    paths: list[str],
    topic: Optional[str] = None,
    partitions: tuple[int, ...] = (),
    start_time: Optional[str] = None,
    end_time: Optional[str] = None,
) -> Iterator[str]:
    """The lines StateChangeLogMerger would print, in its order."""
    start = parse_bound(start_time, DEFAULT_START, "--start-time")
    end = parse_bound(end_time, DEFAULT_END, "--end-time")

    def next_line(it: Iterator[str]):
        for line in it:
            found = DATE.search(line)
            if not found:
                continue
            key = _date_key(found.group())
            if (start is not None and key < start) or (end is not None and key > end):
                continue
            tp = TOPIC_PARTITION.search(line)
            if tp and (topic is None or topic == tp.group(1)) and (not partitions or int(tp.group(3)) in partitions):
                return (found.group(), line, it)
        return None

    # dateBasedOrdering.compare(a, b) = b.date compareTo a.date: the earliest date is the "largest"
    queue = ScalaPriorityQueue(lambda a, b: b[0] < a[0])
    heads = []
    for path in paths:  # `lines ::= lineItr` prepends: the queue is filled in reverse file order
        head = next_line(_lines(path))
        if head is not None:
            heads.insert(0, head)
    for head in heads:
        queue.enqueue(head)
    while len(queue):
        _, line, it = queue.dequeue()
        yield line
        head = next_line(it)
        if head is not None:
            queue.enqueue(head)
