"""``merge --kafka-compat`` against an oracle: Kafka's StateChangeLogMerger, ported line by line.

The oracle below is written from core/src/main/scala/kafka/tools/StateChangeLogMerger.scala@1.0.0
and scala/collection/mutable/PriorityQueue.scala (Scala 2.11, the Scala of Kafka 1.0's default
build) on its own, independently of ``jobs/merge_compat.py``: java.text.SimpleDateFormat dates,
BufferedReader line splitting, the heap's 1-based array with fixUp/fixDown.
"""

from __future__ import annotations

import re
import shutil

import pytest
from click.testing import CliRunner

from kafka_forensics.cli.main import main
from kafka_forensics.jobs.merge_compat import merge_compat
from tests.support.merge_oracle import OLD_ERA, Oracle
from tests.support.paths import REAL_LOGS


# ------------------------------------------------------------------ the tests ----
def test_the_old_era_corpus_is_there():
    assert len(OLD_ERA) >= 13, [p.name for p in OLD_ERA]


def test_all_old_era_files_merged_exactly_as_the_original():
    expected = Oracle(OLD_ERA).run()
    assert len(expected) > 150  # the excerpts hold that many [topic,N] lines
    assert list(merge_compat([str(p) for p in OLD_ERA])) == expected


@pytest.mark.parametrize(
    "topic, partitions", [("test", ()), ("test", (0,)), ("__consumer_offsets", (2, 7, 13, 40)), ("no-such-topic", ())]
)
def test_topic_and_partitions_as_the_original(topic, partitions):
    expected = Oracle(OLD_ERA, topic=topic, partitions=partitions).run()
    got = list(merge_compat([str(p) for p in OLD_ERA], topic=topic, partitions=partitions))
    assert got == expected
    assert all(f"[{topic}," in line for line in got)


def test_time_window_is_inclusive_like_the_original():
    files = [p for p in OLD_ERA if "danisharora" in p.name]
    everything = Oracle(files).run()
    start = Oracle.dateRegex.search(everything[5]).group()
    end = Oracle.dateRegex.search(everything[-5]).group()
    expected = Oracle(files, start=start, end=end).run()
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
    expected = Oracle(copies).run()
    got = list(merge_compat([str(c) for c in copies]))
    assert got == expected
    first_date = Oracle.dateRegex.search(expected[0]).group()
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
    assert result.output.splitlines() == Oracle(chosen).run()


def test_cli_logs_option_and_filters_match_the_oracle():
    files = [p for p in OLD_ERA if "akshaynayak" in p.name or "darrendao" in p.name]
    result = CliRunner().invoke(
        main, ["merge", "--kafka-compat", "--logs", ",".join(map(str, files)), "--topic", "test", "--partitions", "0"]
    )
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == Oracle(files, topic="test", partitions=[0]).run()


def test_partitions_without_topic_and_repeated_partitions_are_refused():
    runner = CliRunner()
    no_topic = runner.invoke(main, ["merge", "--kafka-compat", str(OLD_ERA[0]), "--partitions", "0"])
    assert no_topic.exit_code == 2 and "--partitions needs --topic" in no_topic.output
    repeated = runner.invoke(main, ["merge", "--kafka-compat", str(OLD_ERA[0]), "--topic", "t", "--partitions", "1,1"])
    assert repeated.exit_code == 2 and "repeated entries: 1" in repeated.output
