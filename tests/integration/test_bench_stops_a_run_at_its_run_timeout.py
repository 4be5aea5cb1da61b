"""`fixloop bench --run-timeout S` stops a run that goes past S seconds: its test processes are killed, it
counts as not fixed with the reason, and the bench goes on. A run's own time budget ends first, so a run that
keeps within its steps ends as runs do, with its outcome."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from scripted_model import ScriptedModelServer
from support import scripted_model_env, write_project

MARK = "sleeps_when_asked_4c1d"
SLOW_TEST = (
    "import os\nimport time\n\n\n"
    f"def test_{MARK}():\n"
    "    if os.path.exists('go.txt'):\n"
    "        time.sleep(120)\n"
)
# The model writes go.txt, then runs the test that then sleeps far past the run timeout.
TURN = {
    "content": "checking the slow test.",
    "tool_calls": [
        {"name": "write_file", "arguments": {"path": "go.txt", "content": "go\n"}},
        {"name": "run_tests", "arguments": {"test_ids": [f"tests/test_slow.py::test_{MARK}"]}},
    ],
}


def _processes_with(mark: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if mark in command:
                found.append(f"{entry.name}: {command}")
    return found


def _bench(tmp_path: Path, turns: list[dict], *args: str) -> tuple[subprocess.CompletedProcess[str], dict]:
    server = ScriptedModelServer(turns)
    server.start()
    results = tmp_path / "results.jsonl"
    try:
        command = [sys.executable, "-m", "fixloop", "bench", str(tmp_path / "cases"), "--results", results]
        done = subprocess.run(
            [*map(str, command), *args],
            capture_output=True,
            text=True,
            env=scripted_model_env(server.base_url, tmp_path / "cache"),
            timeout=200,
        )
    finally:
        server.stop()
    assert done.returncode == 0, done.stdout + done.stderr
    [row] = [json.loads(line) for line in results.read_text().splitlines()]
    return done, row


def test_a_run_ends_on_its_own_time_budget_before_the_run_timeout(tmp_path: Path):
    write_project(
        tmp_path / "cases" / "slow",
        {
            "case.json": '{"failing_test_ids": ["tests/test_calc.py::test_add"]}',
            "calc.py": "def add(a, b):\n    return a - b\n",
            "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
            # slow only in the run, once the model wrote go.txt: the judge's run of the case stays quick
            "tests/test_slow.py": "import os\nimport time\n"
            + "".join(
                f"\n\ndef test_slow_{n}():\n    if os.path.exists('go.txt'):\n        time.sleep(2)\n"
                for n in range(40)
            ),
        },
    )
    turns = [  # a different test each turn, so the run is never stuck
        {
            "content": "checking.",
            "tool_calls": [
                *(
                    [{"name": "write_file", "arguments": {"path": "go.txt", "content": "go\n"}}]
                    if n == 0
                    else []
                ),
                {"name": "run_tests", "arguments": {"test_ids": [f"tests/test_slow.py::test_slow_{n}"]}},
            ],
        }
        for n in range(40)
    ]
    _, row = _bench(tmp_path, turns, "--run-timeout", "30", "--max-steps", "40")
    assert row["status"] == "not_fixed"
    assert "time budget used up" in row["summary"], row
    assert row["wall_seconds"] < 30
    assert "run timeout" not in row["note"]
    assert 3 <= row["steps"] < 40  # its tests were slow: it ran out of time, not out of turns


def test_a_run_past_the_run_timeout_is_stopped_and_counts_as_not_fixed(tmp_path: Path):
    write_project(
        tmp_path / "cases" / "slow",
        {
            "case.json": '{"failing_test_ids": ["tests/test_calc.py::test_add"]}',
            "calc.py": "def add(a, b):\n    return a - b\n",
            "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
            "tests/test_slow.py": SLOW_TEST,
        },
    )
    started = time.monotonic()
    done, row = _bench(tmp_path, [TURN] * 5, "--run-timeout", "8", "--test-timeout", "200")
    assert time.monotonic() - started < 100  # far less than the 120 s the test sleeps
    assert row["status"] == "not_fixed"
    assert row["note"] == "stopped at the run timeout (8 s): not fixed in time"
    assert 8 <= row["wall_seconds"] < 40
    assert "slow react#1: not_fixed" in done.stdout
    assert _processes_with(MARK) == []  # the sleeping test was killed with the run
