"""``merge --kafka-compat`` against an oracle: Kafka's StateChangeLogMerger, ported line by line.

The oracle below is written from core/src/main/scala/kafka/tools/StateChangeLogMerger.scala@1.0.0
and scala/collection/mutable/PriorityQueue.scala (Scala 2.11, the Scala of Kafka 1.0's default
build) on its own, independently of ``jobs/merge_compat.py``: java.text.SimpleDateFormat dates,
BufferedReader line splitting, the heap's 1-based array with fixUp/fixDown.
"""

from __future__ import annotations

import datetime as dt
import re
import shutil

import pytest
from click.testing import CliRunner

from kafka_forensics.jobs.cli import main
from kafka_forensics.jobs.merge_compat import merge_compat

from .conftest import REAL_LOGS

OLD_ERA = sorted(p for p in REAL_LOGS.glob("*.log") if re.match(r"\d+-[^-]+-(0\.\d|1\.0)", p.name))


# ---------------------------------------------------------------- the oracle ----
class _Oracle:
    LEGAL_CHARS = "[a-zA-Z0-9._-]"
    topicPartitionRegex = re.compile(r"\[(" + LEGAL_CHARS + r"+),( )*([0-9]+)\]")
    dateRegex = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2},[0-9]{3}")

    def __init__(self, files, topic=None, partitions=(), start="0000-00-00 00:00:00,000",
                 end="9999-12-31 23:59:59,999"):
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
                    if m and (self.topic is None or self.topic == m.group(1)) and (
                            not self.partitions or int(m.group(3)) in self.partitions):
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


# ------------------------------------------------------------------ the tests ----
def test_the_old_era_corpus_is_there():
    assert len(OLD_ERA) >= 13, [p.name for p in OLD_ERA]


def test_all_old_era_files_merged_exactly_as_the_original():
    expected = _Oracle(OLD_ERA).run()
    assert len(expected) > 150  # the excerpts hold that many [topic,N] lines
    assert list(merge_compat([str(p) for p in OLD_ERA])) == expected


@pytest.mark.parametrize("topic, partitions", [("test", ()), ("test", (0,)), ("__consumer_offsets", (2, 7, 13, 40)),
                                               ("no-such-topic", ())])
def test_topic_and_partitions_as_the_original(topic, partitions):
    expected = _Oracle(OLD_ERA, topic=topic, partitions=partitions).run()
    got = list(merge_compat([str(p) for p in OLD_ERA], topic=topic, partitions=partitions))
    assert got == expected
    assert all(f"[{topic}," in line for line in got)


def test_time_window_is_inclusive_like_the_original():
    files = [p for p in OLD_ERA if "danisharora" in p.name]
    everything = _Oracle(files).run()
    start = _Oracle.dateRegex.search(everything[5]).group()
    end = _Oracle.dateRegex.search(everything[-5]).group()
    expected = _Oracle(files, start=start, end=end).run()
    got = list(merge_compat([str(p) for p in files], start_time=start, end_time=end))
    assert got == expected
    assert everything[5] in got and everything[-5] in got and len(got) < len(everything)


def test_equal_timestamps_across_files_come_out_in_the_heaps_order(tmp_path):
    """Five brokers' copies of one file: every date ties; the heap, not the file order, decides."""
    source = REAL_LOGS / "17-aleferov-0.10.1.0-state-change-topic-create.log"
    copies = []
    for broker in range(5):
        copy = tmp_path / f"broker{broker}" / "state-change.log"
        copy.parent.mkdir()
        lines = source.read_text().splitlines()
        copy.write_text("\n".join(f"{line} b{broker}" for line in lines) + "\n")  # tell the copies apart
        copies.append(copy)
    expected = _Oracle(copies).run()
    got = list(merge_compat([str(c) for c in copies]))
    assert got == expected
    first_date = _Oracle.dateRegex.search(expected[0]).group()
    tied = [line[-2:] for line in expected if first_date in line]
    assert tied != sorted(tied) and tied != sorted(tied, reverse=True)  # neither file order nor its reverse


def test_logs_regex_selects_by_file_name_like_the_original(tmp_path):
    for p in OLD_ERA:
        if "state-change" in p.name:
            shutil.copy(p, tmp_path / p.name)
    result = CliRunner().invoke(main, ["merge", "--kafka-compat", "--logs-regex", f"{tmp_path}/.*state-change.*"])
    assert result.exit_code == 0, result.output
    import os
    chosen = [tmp_path / n for n in os.listdir(tmp_path) if re.search(".*state-change.*", n)]
    assert result.output.splitlines() == _Oracle(chosen).run()


def test_cli_logs_option_and_filters_match_the_oracle():
    files = [p for p in OLD_ERA if "akshaynayak" in p.name or "darrendao" in p.name]
    result = CliRunner().invoke(main, ["merge", "--kafka-compat", "--logs", ",".join(map(str, files)),
                                       "--topic", "test", "--partitions", "0"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == _Oracle(files, topic="test", partitions=[0]).run()


def test_partitions_without_topic_and_repeated_partitions_are_refused():
    runner = CliRunner()
    no_topic = runner.invoke(main, ["merge", "--kafka-compat", str(OLD_ERA[0]), "--partitions", "0"])
    assert no_topic.exit_code == 2 and "--partitions needs --topic" in no_topic.output
    repeated = runner.invoke(main, ["merge", "--kafka-compat", str(OLD_ERA[0]), "--topic", "t", "--partitions", "1,1"])
    assert repeated.exit_code == 2 and "repeated entries: 1" in repeated.output
