"""``kafka-forensics merge`` on Spark: every record of every era, in time order, with its broker."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from kafka_forensics.cli.main import main
from kafka_forensics.jobs.filters import event_filter_from
from kafka_forensics.jobs.merge_job import MergeOptions, iter_merged, merge_frame
from kafka_forensics.parsers.records import ParseOptions, parse_file
from tests.support.merge_oracle import OLD_ERA, Oracle
from tests.support.paths import REAL_LOGS

pytestmark = pytest.mark.spark

NEW_ERA = sorted(p for p in REAL_LOGS.glob("*.log") if p not in OLD_ERA)


def _merged(spark, files, flt=None, offsets=None) -> list[dict]:
    opts = MergeOptions(event_filter=flt or event_filter_from(None, None, None, None), clock_offsets=offsets or {})
    return list(iter_merged(merge_frame(spark, [str(p) for p in files], ParseOptions(), opts)))


def _records(path) -> int:
    return len(parse_file(path.read_bytes(), str(path)).rows)


def test_every_record_of_every_era_comes_out_once_in_time_order(spark):
    files = NEW_ERA + OLD_ERA
    rows = _merged(spark, files)
    assert len(rows) == sum(_records(p) for p in files)
    assert len({(r["source_file"], r["line_no"]) for r in rows}) == len(rows)
    stamps = [r["ts"] for r in rows if r["ts"] is not None]
    assert stamps == sorted(stamps)
    keys = [(r["ts"], r["source_file"], r["line_no"]) for r in rows]
    assert keys == sorted(keys)  # equal timestamps: file, then line - stable across runs
    # 1.1+ and KRaft lines, which the original drops (no [topic,N]), are all there
    kraft = [r for r in rows if "49-ammar-4.0.0" in r["source_file"]]
    assert len(kraft) == _records(REAL_LOGS / "49-ammar-4.0.0-kraft-state-change-3brokers-create.log")
    assert {r["broker"] for r in kraft} == {1, 2, 3}


def test_the_original_lines_appear_in_the_originals_order_on_old_logs(spark):
    """Of our merge, the lines StateChangeLogMerger keeps come out in its order, when the files' own
    timestamps run forward (file 13 logs 09:48:15,044 before 15,034). Lines of different files with
    the same millisecond are ordered by file here, by the heap there (--kafka-compat reproduces it)."""
    files = [p for p in OLD_ERA if not p.name.startswith("13-")]
    expected = Oracle(files).run()
    kept = [
        r["text"]
        for r in _merged(spark, files)
        if Oracle.dateRegex.search(r["text"]) and Oracle.topicPartitionRegex.search(r["text"])
    ]

    def by_millisecond(lines):
        groups: dict[str, list[str]] = {}
        for line in lines:
            groups.setdefault(Oracle.dateRegex.search(line).group(), []).append(line)
        return [(d, sorted(g)) for d, g in groups.items()]

    assert len(kept) == len(expected) > 150
    assert by_millisecond(kept) == by_millisecond(expected)
    assert sum(a == b for a, b in zip(kept, expected)) > 0.9 * len(expected)


def test_stack_traces_stay_with_their_record(spark):
    path = REAL_LOGS / "02-darrendao-0.8.1-state-change-noreplicaonline.log"
    rows = _merged(spark, [path])
    failed = next(r for r in rows if "failed" in r["text"] and r["stack"])
    lines = path.read_text().splitlines()
    assert failed["text"] == lines[failed["line_no"] - 1]
    assert failed["stack"].splitlines()[0].startswith("kafka.common.NoReplicaOnlineException")
    assert (
        failed["stack"].splitlines() == lines[failed["line_no"] : failed["line_no"] + len(failed["stack"].splitlines())]
    )


def test_topic_filter_keeps_the_cluster_lines_that_explain_it(spark):
    path = REAL_LOGS / "08-danisharora-0.9.0.0-controller-broker-failure.log"
    everything = _merged(spark, [path])
    rows = _merged(spark, [path], event_filter_from("test", "0", None, None))
    assert rows and len(rows) < len(everything)
    for r in rows:
        assert (r["topic"], r["partition"]) == ("test", 0) or r["topic"] is None
    assert any(r["event_type"] in ("broker_change", "broker_failure") for r in rows)


def test_time_window_is_inclusive(spark):
    path = REAL_LOGS / "20-oridonner-0.11.0.0-controller-3brokers-election.log"
    everything = _merged(spark, [path])
    first, last = everything[3], everything[-3]
    fmt = "%Y-%m-%d %H:%M:%S,"
    start = first["ts"].strftime(fmt) + f"{first['ts'].microsecond // 1000:03d}"
    end = last["ts"].strftime(fmt) + f"{last['ts'].microsecond // 1000:03d}"
    rows = _merged(spark, [path], event_filter_from(None, None, start, end))
    assert rows[0]["ts"] == first["ts"] and rows[-1]["ts"] == last["ts"]
    assert all(first["ts"] <= r["ts"] <= last["ts"] for r in rows)


def test_clock_skew_offset_reorders_one_brokers_lines(spark, tmp_path):
    """Broker 2's clock ran 5 s ahead: its election (logged at :05) really came before broker 1's line at :03."""
    (tmp_path / "broker1").mkdir()
    (tmp_path / "broker2").mkdir()
    (tmp_path / "broker1" / "controller.log").write_text(
        "[2024-03-04 10:00:03,000] INFO [Controller id=1] Broker 1 starting become controller state transition "
        "(kafka.controller.KafkaController)\n"
    )
    (tmp_path / "broker2" / "controller.log").write_text(
        "[2024-03-04 10:00:05,000] INFO [Controller id=2] 2 successfully elected as the controller. Epoch "
        "incremented to 7 and epoch zk version is now 7 (kafka.controller.KafkaController)\n"
    )
    plain = [r["broker"] for r in _merged(spark, [tmp_path])]
    skewed = [r["broker"] for r in _merged(spark, [tmp_path], offsets={2: -5.0})]
    assert plain == [1, 2] and skewed == [2, 1]


def test_cli_prints_broker_and_file_line_then_the_line(spark):
    path = REAL_LOGS / "23-rzethon-1.0.0-state-change-leader-minus1-shared-file.log"
    result = CliRunner().invoke(main, ["merge", str(path)])
    assert result.exit_code == 0, result.output
    out = [line for line in result.output.splitlines() if line.startswith("broker ")]
    assert len(out) == _records(path)
    assert {re.match(r"broker (\S+) \|", line).group(1) for line in out} >= {"1", "3"}
    first = out[0].split(" | ", 2)
    assert first[1].endswith(":1") or re.search(r":\d+$", first[1])
    assert first[2] in path.read_text().splitlines()
    plain = CliRunner().invoke(main, ["merge", str(path), "--plain"])
    assert next(line for line in plain.output.splitlines() if line.startswith("[")) == first[2]


def test_cli_errors_are_one_sentence(spark, tmp_path):
    runner = CliRunner()
    missing = runner.invoke(main, ["merge", str(tmp_path / "nope.log")])
    assert missing.exit_code == 2 and "input not found" in missing.output and "Traceback" not in missing.output
    nothing = runner.invoke(main, ["merge"])
    assert nothing.exit_code == 2 and "give the logs to merge" in nothing.output
    bad_time = runner.invoke(main, ["merge", str(OLD_ERA[0]), "--start-time", "yesterday"])
    assert bad_time.exit_code == 2 and "--start-time" in bad_time.output
    bad_skew = runner.invoke(main, ["merge", str(OLD_ERA[0]), "--clock-skew", "two=1"])
    assert bad_skew.exit_code == 2 and "BROKER=SECONDS" in bad_skew.output


def test_logs_regex_and_output_file(spark, tmp_path):
    """StateChangeLogMerger's --logs-regex picks files by name in a directory; --output writes the merge."""
    out = tmp_path / "merged.log"
    result = CliRunner().invoke(
        main, ["merge", "--logs-regex", f"{REAL_LOGS}/^0[0-9]-.*state-change.*", "--plain", "--output", str(out)]
    )
    assert result.exit_code == 0, result.output
    chosen = [p for p in REAL_LOGS.glob("0*.log") if "state-change" in p.name]
    assert len(chosen) == 2
    records = [line for line in out.read_text().splitlines() if re.match(r"\[\d{4}-", line)]
    assert len(records) == sum(_records(p) for p in chosen)
