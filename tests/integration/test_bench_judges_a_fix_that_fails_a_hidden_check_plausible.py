"""`fixloop bench` with the scripted model on a leap-year case whose visible test a wrong fix passes: the
judge adds the case's hidden check after the visible tests pass, so the wrong fix ("every year divisible by
4") is `plausible`, with the hidden check and its failure line, and the right one `fixed`; a case without
hidden checks is `fixed (unchecked)`. The hidden folder is in no copy the run gets, nor in any request to the
model."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scripted_model import ScriptedModelServer
from support import scripted_model_env, write_project

MARKER = "hidden-check-marker-5f1c"
BUGGY = "def is_leap(year):\n    return year % 4 == 0 and year % 100 != 0\n"
WRONG = "def is_leap(year):\n    return year % 4 == 0\n"
RIGHT = "def is_leap(year):\n    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)\n"
VISIBLE = (
    "from calendar_rules import is_leap\n\n\n"
    "def test_2000_is_leap():\n    assert is_leap(2000)\n\n\n"
    "def test_common_years():\n    assert is_leap(2024) and not is_leap(2023)\n"
)
HIDDEN = (
    f"# {MARKER}: centuries are leap only when divisible by 400\n"
    "from calendar_rules import is_leap\n\n\n"
    "def test_century_years_are_not_leap():\n"
    "    assert not is_leap(1900)\n"
)
HIDDEN_ID = "tests/test_hidden_calendar.py::test_century_years_are_not_leap"


def make_case(root: Path, name: str, log: Path, hidden: bool) -> None:
    """A case whose setup lists, in every fresh copy, its Python files and the files holding the marker."""
    listing = f"find . -type f -name '*.py' >> {log}.files; grep -rl {MARKER} . >> {log}.marker; true"
    case: dict[str, Any] = {
        "failing_test_ids": ["tests/test_calendar.py::test_2000_is_leap"],
        "setup": [listing],
    }
    if hidden:
        case["hidden_checks"] = f"../../hidden/{name}"
        case["reference"] = {"path": "calendar_rules.py", "text": RIGHT.splitlines()[1]}
        write_project(root / "hidden" / name, {"tests/test_hidden_calendar.py": HIDDEN})
    write_project(
        root / "cases" / name,
        {"case.json": json.dumps(case), "calendar_rules.py": BUGGY, "tests/test_calendar.py": VISIBLE},
    )


def bench(tmp_path: Path, server: ScriptedModelServer, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "fixloop", "bench", *args],
        capture_output=True,
        text=True,
        env=scripted_model_env(server.base_url, tmp_path / "cache"),
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def fix_with(
    tmp_path: Path, scripted_model: Callable[..., ScriptedModelServer], code: str, hidden: bool = True
) -> tuple[dict[str, Any], ScriptedModelServer, subprocess.CompletedProcess[str]]:
    """One react run of the leap case whose model rewrites calendar_rules.py as `code` and submits."""
    log = tmp_path / "copies"
    make_case(tmp_path, "leap", log, hidden)
    turn = {
        "content": "is_leap misses 2000; rewriting it.",
        "tool_calls": [
            {"name": "write_file", "arguments": {"path": "calendar_rules.py", "content": code}},
            {"name": "submit", "arguments": {"summary": "is_leap fixed"}},
        ],
    }
    server = scripted_model([turn] * 10)
    results = tmp_path / "results.jsonl"
    done = bench(tmp_path, server, str(tmp_path / "cases"), "--results", str(results))
    (row,) = [json.loads(line) for line in results.read_text().splitlines()]
    return row, server, done


def assert_the_hidden_folder_stayed_hidden(tmp_path: Path, server: ScriptedModelServer) -> None:
    copies = (tmp_path / "copies.files").read_text()
    assert copies.count("./tests/test_calendar.py") >= 3  # the run's copy, the judge's two
    assert "hidden" not in copies and (tmp_path / "copies.marker").read_text() == ""
    assert server.requests
    for request in server.requests:
        body = json.dumps(request)
        assert "test_hidden" not in body and MARKER not in body and "is_leap(1900)" not in body


def test_a_wrong_fix_that_passes_the_visible_tests_is_plausible(tmp_path: Path, scripted_model):
    row, server, done = fix_with(tmp_path, scripted_model, WRONG)
    assert row["status"] == "plausible" and row["claimed"] is True, row["note"]
    assert f"hidden check {HIDDEN_ID} fails" in row["note"]
    assert "line 6: assert not is_leap(1900)" in row["note"]  # the hidden check's failing line
    assert (
        row["hidden_checks"] == 1
        and row["reference"] == f"calendar_rules.py: {RIGHT.splitlines()[1].strip()}"
    )
    assert "leap react#1: plausible" in done.stdout and re.search(
        r"^plausible +1$", done.stdout, re.MULTILINE
    )
    assert_the_hidden_folder_stayed_hidden(tmp_path, server)

    report = bench(
        tmp_path, server, "report", str(tmp_path / "results.jsonl"), "--report", str(tmp_path / "r.md")
    )
    assert re.search(r"^leap +react +plausible ", report.stdout, re.MULTILINE)
    markdown = (tmp_path / "r.md").read_text()
    assert (
        "| plausible | 1 |" in markdown
        and "reference calendar_rules.py: return year % 4 == 0 and" in markdown
    )


def test_the_right_fix_passes_the_hidden_check_and_is_fixed(tmp_path: Path, scripted_model):
    row, server, done = fix_with(tmp_path, scripted_model, RIGHT)
    assert row["status"] == "fixed", row["note"]
    assert row["note"].endswith("1 hidden check(s) pass") and row["reference"] == ""
    assert re.search(r"^fix rate +1/1 = 100%$", done.stdout, re.MULTILINE)
    assert_the_hidden_folder_stayed_hidden(tmp_path, server)


def test_a_fix_on_a_case_without_hidden_checks_is_fixed_unchecked(tmp_path: Path, scripted_model):
    row, _server, done = fix_with(tmp_path, scripted_model, WRONG, hidden=False)
    assert row["status"] == "fixed_unchecked" and row["hidden_checks"] == 0, row["note"]
    assert row["note"].endswith("the case has no hidden checks")
    assert "leap react#1: fixed (unchecked)" in done.stdout
    assert re.search(r"^leap +react +fixed \(unchecked\) ", done.stdout, re.MULTILINE)
    assert re.search(r"^fix rate +0/1 = 0% \(\+1 unchecked\)$", done.stdout, re.MULTILINE)
