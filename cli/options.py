"""Command-line options shared by the subcommands that read logs."""

from __future__ import annotations

import functools
from typing import Callable

import click

from kafka_forensics.core.errors import UsageError
from kafka_forensics.parsers.records import DEFAULT_BROKER_FROM_PATH, ParseOptions


def parse_conf(pairs: tuple[str, ...]) -> dict[str, str]:
    conf = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"--conf expects key=value, got {pair!r}")
        conf[key.strip()] = value.strip()
    return conf


def input_options(func: Callable) -> Callable:
    """--kafka-version, --layout, --broker-from-path, --timezone, --master, --conf."""
    decorators = [
        click.option(
            "--kafka-version",
            default=None,
            metavar="V",
            help="Kafka version that wrote the logs (e.g. 0.10.2, 2.8, 3.9-kraft, 4.0); default: detected per file.",
        ),
        click.option(
            "--layout",
            default=None,
            metavar="PATTERN",
            help="log4j ConversionPattern of the logs (default Kafka's '[%d] %p %m (%c)%n').",
        ),
        click.option(
            "--broker-from-path",
            default=DEFAULT_BROKER_FROM_PATH,
            show_default=True,
            metavar="REGEX",
            help="Regex whose last group in a file path is the broker id, for lines that carry none.",
        ),
        click.option(
            "--timezone",
            default="UTC",
            show_default=True,
            help="Time zone the brokers logged in (log4j prints local time without a zone).",
        ),
        click.option("--master", default=None, help="Spark master (default local[*], or what spark-submit set)."),
        click.option("--conf", "conf", multiple=True, metavar="K=V", help="Extra Spark configuration, repeatable."),
    ]
    return functools.reduce(lambda f, d: d(f), reversed(decorators), func)


def parse_options_from(kafka_version, layout, broker_from_path, timezone, use_lark=False) -> ParseOptions:
    import re
    import zoneinfo

    from kafka_forensics.core.eras import dialect_for_version
    from kafka_forensics.parsers.layout import parse_layout

    if kafka_version:
        dialect_for_version(kafka_version)  # fail early, with the version in the message
    if layout:
        parse_layout(layout)
    try:
        pattern = re.compile(broker_from_path)
    except re.error as err:
        raise UsageError(f"--broker-from-path is not a valid regex: {err}") from err
    if pattern.groups < 1:
        raise UsageError("--broker-from-path needs one capture group for the broker id")
    if timezone.upper() != "UTC":
        try:
            zoneinfo.ZoneInfo(timezone)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError) as err:
            raise UsageError(f"--timezone {timezone!r} is not a known time zone") from err
    return ParseOptions(
        layout=layout,
        kafka_version=kafka_version,
        broker_from_path=broker_from_path,
        timezone=timezone,
        use_lark=use_lark,
    )


def filter_options(func: Callable) -> Callable:
    """--topic, --partitions, --start-time, --end-time (as Kafka's StateChangeLogMerger has them);
    turn them into a filter with ``jobs.filters.event_filter_from``."""
    decorators = [
        click.option(
            "--topic",
            "filter_topic",
            default=None,
            metavar="TOPIC",
            help="Only this topic's lines (lines about no partition, such as controller elections "
            "and broker changes, are kept).",
        ),
        click.option(
            "--partitions",
            "filter_partitions",
            default=None,
            metavar="0,1,2",
            help="Only these partitions of --topic (comma-separated ids).",
        ),
        click.option(
            "--start-time",
            "start_time",
            default=None,
            metavar="TIME",
            help="Earliest line, inclusive: 'yyyy-MM-dd HH:mm:ss,SSS' in --timezone.",
        ),
        click.option(
            "--end-time",
            "end_time",
            default=None,
            metavar="TIME",
            help="Latest line, inclusive: 'yyyy-MM-dd HH:mm:ss,SSS' in --timezone.",
        ),
    ]
    return functools.reduce(lambda f, d: d(f), reversed(decorators), func)
