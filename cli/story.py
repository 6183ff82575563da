"""``kafka-forensics story``: the incident in order and in words, each sentence citing its lines."""

from __future__ import annotations

import click

from .common import debug_option, make_console, run_guarded
from .listings import story_listing
from .options import input_options, parse_conf, parse_options_from
from .output import emit, format_option, resolve_format
from .replay import _options, replay_options


@click.command("story")
@click.argument("inputs", nargs=-1, required=True)
@input_options
@replay_options
@format_option
@debug_option
def story(
    inputs,
    kafka_version,
    layout,
    broker_from_path,
    timezone,
    master,
    conf,
    cluster_from_path,
    clock_skew,
    use_lark,
    output_format,
    debug,
):
    """Tell the incident in INPUTS in order and in words: controller changes with the reason Kafka
    logged (ZooKeeper session expiry, resignation, KRaft quorum election), broker deaths and returns,
    controlled shutdowns, leader elections by kind (new partition, offline, unclean, preferred,
    controlled shutdown, reassignment) and the first and last line of each finding's episode. Every
    sentence cites its file:line; each kind is capped and what is left out is counted.

    Parses and replays without keeping anything (in this process, without Spark, when the run fits in
    memory: README, "Engines"); "replay" and "analyze" write the same story to DIR/story.json and the HTML report.

    \b
    Examples:
      kafka-forensics story sample_logs/real-2.4-zk-controller-kill
      kafka-forensics story sample_logs/real-3.9-kraft-unclean-election --format json
    """
    fmt = resolve_format(output_format)

    def action():
        from kafka_forensics.jobs.engine import DRIVER, choose_engine

        options = parse_options_from(kafka_version, layout, broker_from_path, timezone, use_lark)
        ropts = _options(kafka_version, cluster_from_path, clock_skew)
        settings = parse_conf(conf)
        if choose_engine(list(inputs), None, master, settings) == DRIVER:
            from kafka_forensics.jobs.replay_driver import story_in_driver

            told = story_in_driver(list(inputs), options, ropts)
        else:
            from kafka_forensics.jobs.spark_session import build_session
            from kafka_forensics.jobs.story_job import run_story

            told = run_story(build_session(master, settings), list(inputs), options, ropts)
        emit("story", [story_listing(told)], fmt, make_console())

    run_guarded(debug, action)
