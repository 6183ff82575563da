"""Every subcommand answers --help with its options and at least one runnable example."""

from __future__ import annotations

import re

import click
import pytest
from click.testing import CliRunner

from kafka_forensics.cli.main import main


def _commands(group: click.Group, prefix: tuple[str, ...] = ()):
    for name in sorted(group.commands):
        command = group.commands[name]
        yield prefix + (name,)
        if isinstance(command, click.Group):
            yield from _commands(command, prefix + (name,))


ALL = list(_commands(main))


def test_the_one_command_subcommands_are_registered():
    names = {c[0] for c in ALL}
    assert {"parse", "replay", "merge", "analyze", "simulate", "rules"} <= names


@pytest.mark.parametrize("path", ALL, ids=lambda p: " ".join(p))
def test_help_shows_an_example_that_names_the_command(path):
    result = CliRunner().invoke(main, [*path, "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"Usage: main {' '.join(path)}") or f"{' '.join(path)} [OPTIONS]" in result.output
    assert re.search(r"Examples?:", result.output), f"{' '.join(path)} --help has no example"
    example = re.search(r"Examples?:\s*\n\s*(kafka-forensics .+)", result.output)
    assert example and f"kafka-forensics {' '.join(path)}" in result.output


def test_main_help_lists_the_exit_codes():
    result = CliRunner().invoke(main, ["--help"])
    assert result.exit_code == 0
    for code in ("0", "1", "2", "3"):
        assert re.search(rf"^\s+{code}\s+\S", result.output, re.M)


def test_unknown_subcommand_is_a_usage_error():
    result = CliRunner().invoke(main, ["frobnicate"])
    assert result.exit_code == 2 and "No such command" in result.output
