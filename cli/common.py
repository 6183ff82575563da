"""What every subcommand shares: turning our exceptions into one sentence and an exit code."""

from __future__ import annotations

import sys
import traceback
from typing import Callable, TypeVar

import click

from kafka_forensics.core.errors import KafkaForensicsError

T = TypeVar("T")


def make_console(stderr: bool = False):
    """A rich console that never hard-wraps printed lines: a ``file:line`` reference or a log line
    split at column 80 (rich's width when output is not a terminal) could not be grepped or pasted."""
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def driver_engine_line(command: str, done: str) -> str:
    """What a command prints when it runs on the driver engine (``jobs/engine.py``): what it ``done`` in this
    process, and how to ask for Spark instead."""
    from kafka_forensics.jobs.engine import ENGINE_CONF

    return (
        f"[bold]kafka-forensics {command}[/bold]: {done} in this process (it fits in memory) "
        f"([dim]--conf {ENGINE_CONF}=spark[/dim] for Spark)"
    )


debug_option = click.option("--debug", is_flag=True, default=False, help="Show the full traceback on errors.")


def run_guarded(debug: bool, action: Callable[[], T]) -> T:
    """Run ``action``; on a known error print one sentence and exit with its documented code."""
    try:
        return action()
    except KafkaForensicsError as err:
        if debug:
            traceback.print_exc()
        click.echo(f"kafka-forensics: error: {err}", err=True)
        sys.exit(err.exit_code)
    except KeyboardInterrupt:
        click.echo("kafka-forensics: interrupted", err=True)
        sys.exit(130)
    except Exception as err:  # a bug: still one sentence unless --debug
        if debug:
            traceback.print_exc()
        click.echo(
            f"kafka-forensics: internal error: {type(err).__name__}: {err} (rerun with --debug)",
            err=True,
        )
        sys.exit(3)
