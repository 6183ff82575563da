"""The layout's promise, checked on every import (module level and inside functions): imports point down.

    core <- parsers <- statemachines <- replay <- (expectations, reports, simulator) <- jobs <- cli
    core <- ... <- (replay, simulator) <- lab <- cli   (the real-Kafka lab: beside jobs)

Packages of one layer never import each other, and the pure layers (core, parsers,
statemachines, replay, simulator) never import Spark, GX or click. The README's diagram
("How the code is laid out") is this table.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.paths import REPO

LAYERS: dict[str, int] = {
    "core": 0,
    "parsers": 1,
    "statemachines": 2,
    "replay": 3,
    "expectations": 4,
    "reports": 4,
    "simulator": 4,
    "jobs": 5,
    "lab": 5,  # real Kafka brokers and recorded incidents; only evaluate/differential import the tool
    "cli": 6,
}
ONLY: dict[str, set[str]] = {}
PURE = {"core", "parsers", "statemachines", "replay", "simulator"}
HEAVY = ("pyspark", "great_expectations", "click", "rich")
PACKAGES = sorted(p for p in {*LAYERS, *ONLY} if (REPO / p / "__init__.py").is_file())


def _imports(path: Path, package: str) -> list[tuple[int, str]]:
    """(line, absolute module) of every import in ``path`` (relative ones resolved in ``package``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = ["kafka_forensics", package, *path.relative_to(REPO / package).with_suffix("").parts]
    if here[-1] == "__init__":
        here = here[:-1]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here[: len(here) - node.level + (1 if path.name == "__init__.py" else 0)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append((node.lineno, module))
    return found


def _package_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "kafka_forensics" and len(parts) > 1 else None


def test_every_package_is_in_the_table():
    on_disk = {p.parent.name for p in REPO.glob("*/__init__.py")} - {"tests"}
    assert on_disk <= {*LAYERS, *ONLY}, on_disk - {*LAYERS, *ONLY}


@pytest.mark.parametrize("package", PACKAGES)
def test_imports_point_down(package):
    wrong = []
    for path in sorted((REPO / package).rglob("*.py")):
        for line, module in _imports(path, package):
            target = _package_of(module)
            where = f"{path.relative_to(REPO)}:{line} imports {module}"
            if target is None:
                if package in PURE and module.split(".")[0] in HEAVY:
                    wrong.append(f"{where} (the {package} layer stays free of Spark, GX and the CLI)")
                continue
            if target == package:
                continue
            allowed = ONLY.get(package)
            if allowed is not None:
                ok = target in allowed
            else:
                ok = target in LAYERS and LAYERS[target] < LAYERS[package]
            if not ok:
                wrong.append(where)
    assert not wrong, "\n".join(wrong)


# The lab's truth comes from what it did and what Kafka printed, never from the tool under test: only
# the two modules that judge the tool against a recording (evaluate, differential) may import it.
LAB_JUDGES = {"evaluate.py", "differential.py"}
RULE_VOCABULARY = "kafka_forensics.replay.findings"  # the rule names truth.json speaks in (names only)
# The one reader of Kafka's own `kafka-topics --describe` text (what Kafka printed is the truth; the tool's
# final-state oracle reads the same text). It reads a tool's output, not the logs under test, and
# tests/lab/test_units.py checks it against the raw text of every recorded snapshot.
DESCRIBE_TEXT = "kafka_forensics.parsers.describe_output"


def test_the_labs_truth_side_imports_only_core():
    wrong = []
    for path in sorted((REPO / "lab").glob("*.py")):
        if path.name in LAB_JUDGES:
            continue
        for line, module in _imports(path, "lab"):
            target = _package_of(module)
            if target not in (None, "core", "lab") and module not in (RULE_VOCABULARY, DESCRIBE_TEXT):
                wrong.append(f"{path.relative_to(REPO)}:{line} imports {module}")
    assert not wrong, "\n".join(wrong)
