"""Kafka's StateChangeLogMerger, ported line by line: the oracle ``merge --kafka-compat`` is tested against.

Written from core/src/main/scala/kafka/tools/StateChangeLogMerger.scala@1.0.0 and
scala/collection/mutable/PriorityQueue.scala (Scala 2.11, the Scala of Kafka 1.0's default build) on
its own, independently of ``jobs/merge_compat.py``: java.text.SimpleDateFormat dates, BufferedReader
line splitting, the heap's 1-based array with fixUp/fixDown.
"""

from __future__ import annotations

import datetime as dt
import re

from tests.support.paths import REAL_LOGS

OLD_ERA = sorted(p for p in REAL_LOGS.glob("*.log") if re.match(r"\d+-[^-]+-(0\.\d|1\.0)", p.name))


# ---------------------------------------------------------------- the oracle ----
class Oracle:
    LEGAL_CHARS = "[a-zA-Z0-9._-]"
    topicPartitionRegex = re.compile(r"\[(" + LEGAL_CHARS + r"+),( )*([0-9]+)\]")
    dateRegex = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2},[0-9]{3}")

    def __init__(
        self, files, topic=None, partitions=(), start="0000-00-00 00:00:00,000", end="9999-12-31 23:59:59,999"
    ):
        self.files, self.topic, self.partitions = files, topic, list(partitions)
        self.startDate = self.parse(start.replace('"', " ").strip())
        self.endDate = self.parse(end.replace('"', " ").strip())

    @staticmethod
    def parse(d):
        y, mo, day = int(d[0:4]), int(d[5:7]), int(d[8:10])
        if (y, mo, day) == (0, 0, 0):  # lenient SimpleDateFormat: some day before year 1
            return dt.datetime.min
        return dt.datetime(y, mo, day, int(d[11:13]), int(d[14:16]), int(d[17:19]), int(d[20:23]) * 1000)

    @staticmethod
    def getLines(path):
        text = path.read_bytes().decode("utf-8")
        lines = re.split(r"\r\n|\r|\n", text)
        if lines and lines[-1] == "":
            lines.pop()
        return iter(lines)

    def getNextLine(self, itr):
        for nextLine in itr:
            d = self.dateRegex.search(nextLine)
            if d:
                date = self.parse(d.group())
                if self.startDate <= date <= self.endDate:
                    m = self.topicPartitionRegex.search(nextLine)
                    if (
                        m
                        and (self.topic is None or self.topic == m.group(1))
                        and (not self.partitions or int(m.group(3)) in self.partitions)
                    ):
                        return (nextLine, itr)
        return ("", None)

    @classmethod
    def compare(cls, first, second):  # dateBasedOrdering
        a = cls.dateRegex.search(first[0]).group()
        b = cls.dateRegex.search(second[0]).group()
        return (b > a) - (b < a)

    def run(self):
        array, size0 = [None], 1  # ResizableArray, array(0) unused

        def lt(x, y):
            return self.compare(x, y) < 0

        def fixUp(m):
            k = m
            while k > 1 and lt(array[k // 2], array[k]):
                array[k], array[k // 2] = array[k // 2], array[k]
                k = k // 2

        def fixDown(m, n):
            k = m
            while n >= 2 * k:
                j = 2 * k
                if j < n and lt(array[j], array[j + 1]):
                    j += 1
                if self.compare(array[k], array[j]) >= 0:
                    return
                array[k], array[j] = array[j], array[k]
                k = j

        def enqueue(elem):
            nonlocal size0
            if len(array) <= size0:
                array.append(None)
            array[size0] = elem
            fixUp(size0)
            size0 += 1

        def dequeue():
            nonlocal size0
            size0 -= 1
            array[1], array[size0] = array[size0], array[1]
            fixDown(1, size0 - 1)
            return array[size0]

        lines = []
        for itr in [self.getLines(f) for f in self.files]:
            lineItr = self.getNextLine(itr)
            if lineItr[1] is not None:
                lines.insert(0, lineItr)  # lines ::= lineItr
        for x in lines:  # pqueue.enqueue(lines:_*) → ++= → += each
            enqueue(x)
        output = []
        while size0 > 1:
            line, itr = dequeue()
            output.append(line)
            nxt = self.getNextLine(itr)
            if nxt[1] is not None:
                enqueue(nxt)
        return output
