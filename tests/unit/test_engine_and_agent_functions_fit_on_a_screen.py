"""Every function in the engine and the agent is at most 40 lines (its decorators aside): a longer one holds
more than one step, and is split into named ones. Elsewhere in the package the longer functions written
before this rule are listed with their length: none may grow, none may be added, and a listed one that is
split must leave the list."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "server" / "fixloop"
MAX_LINES = 40


# Older functions over the limit outside engine/ and agent/, and their length today: split, never grow.
OLDER_LONG: dict[str, int] = {}  # functions past 40 lines that may stay until split: none now


def function_lengths(folder: str) -> dict[str, int]:
    """path::name -> lines from `def` to the last line, for every function (nested ones too)."""
    lengths: dict[str, int] = {}
    for path in sorted((PACKAGE / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                name = f"{path.relative_to(PACKAGE).as_posix()}::{node.name}"
                lengths[name] = max(lengths.get(name, 0), node.end_lineno - node.lineno + 1)
    return lengths


def test_every_engine_and_agent_function_is_at_most_40_lines() -> None:
    lengths = {**function_lengths("engine"), **function_lengths("agent")}
    long = {name: n for name, n in lengths.items() if n > MAX_LINES}
    assert len(lengths) > 200 and long == {}


def test_no_function_elsewhere_grows_past_40_lines_and_the_older_ones_only_shrink() -> None:
    lengths = function_lengths(".")
    long = {name: n for name, n in lengths.items() if n > MAX_LINES}
    grown = {name: n for name, n in long.items() if n > OLDER_LONG.get(name, MAX_LINES)}
    split = sorted(name for name in OLDER_LONG if lengths.get(name, 0) <= MAX_LINES)
    assert grown == {}, "split these into named steps (at most 40 lines each)"
    assert split == [], "these fit now: take them off OLDER_LONG"


def test_the_fix_run_is_prepare_assemble_run_finish() -> None:
    lengths = function_lengths("engine")
    steps = ("execute", "run", "_assemble", "_run", "_finish")
    found = {name.split("::")[1]: n for name, n in lengths.items() if name.split("::")[1] in steps}
    assert set(found) == set(steps) and max(found.values()) <= MAX_LINES
