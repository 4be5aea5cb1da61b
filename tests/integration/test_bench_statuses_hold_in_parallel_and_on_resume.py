"""`fixloop bench` on case folders with the scripted model: the judge's statuses (a claimed fix that breaks
a test outside the gate's scope included) are the same with --jobs 2 as with --jobs 1, and a second run
on the same results file skips what finished (errors are tried again)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixloop.bench.statuses import status_label
from scripted_model import ScriptedModelServer
from support import scripted_model_env, write_project

GOOD_CALC = "def add(a, b):\n    return a + b\n"
# Every turn is the same (write calc.py whole, then submit): interleaved runs get the same answers.
TURN = {
    "content": "add subtracts; rewriting calc.py.",
    "tool_calls": [
        {"name": "write_file", "arguments": {"path": "calc.py", "content": GOOD_CALC}},
        {"name": "submit", "arguments": {"summary": "add adds"}},
    ],
}
EXPECTED = {
    "breaks_stats": "claimed_but_wrong",
    "fixed_with_setup": "fixed_unchecked",  # no hidden checks: the visible tests pass, nothing more is known
    "bug_elsewhere": "not_fixed",
    "setup_fails": "error",
}


def make_cases(root: Path) -> Path:
    case = '{"failing_test_ids": ["tests/test_calc.py::test_add"]%s}'
    # The gate runs test_calc (and test modules importing calc); test_stats reaches calc through stats only.
    write_project(
        root / "breaks_stats",
        {
            "case.json": case % "",
            "calc.py": "def add(a, b):\n    return a - b\n\n\ndef scale(x):\n    return 2 * x\n",
            "stats.py": "from calc import scale\n\n\ndef doubled_sum(xs):\n    return scale(sum(xs))\n",
            "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
            "tests/test_stats.py": "from stats import doubled_sum\n\n\ndef test_doubled_sum():\n"
            "    assert doubled_sum([1, 2]) == 6\n",
        },
    )
    write_project(
        root / "fixed_with_setup",
        {
            "case.json": case % ", \"setup\": [\"python -c \\\"open('two.txt', 'w').write('2')\\\"\"]",
            "calc.py": "def add(a, b):\n    return a - b\n",
            "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n"
            "    assert add(1, int(open('two.txt').read())) == 3\n",
        },
    )
    write_project(
        root / "bug_elsewhere",
        {
            "case.json": case % "",
            "ops.py": "def add(a, b):\n    return a - b\n",
            "tests/test_calc.py": "from ops import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        },
    )
    write_project(
        root / "setup_fails",
        {
            "case.json": case % ', "setup": ["echo cannot build >&2; exit 3"]',
            "calc.py": "def add(a, b):\n    return a - b\n",
            "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        },
    )
    return root


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    cases = make_cases(tmp_path_factory.mktemp("cases"))
    work = tmp_path_factory.mktemp("bench")
    server = ScriptedModelServer([TURN] * 40)
    server.start()
    env = scripted_model_env(server.base_url, work / "cache")

    def run(jobs: int, results: str) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "fixloop",
                "bench",
                str(cases),
                "--jobs",
                str(jobs),
                "--results",
                str(work / results),
                "--judge-test-timeout",
                "30",
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        lines = (work / results).read_text().splitlines()
        return done, {record["case"]: record["status"] for record in map(json.loads, lines)}

    yield run, server
    server.stop()


def test_the_judge_scores_each_case_and_flags_the_claimed_fix_that_breaks_another_test(bench):
    run, _server = bench
    done, statuses = run(1, "serial.jsonl")
    assert statuses == EXPECTED, done.stdout
    assert (
        "breaks_stats react#1: claimed_but_wrong" in done.stdout
        and "tests/test_stats.py::test_doubled_sum passed before and now fails to import" in done.stdout
    )
    assert "setup command `echo cannot build >&2; exit 3` failed (exit 3): cannot build" in done.stdout
    assert re.search(r"^claimed_but_wrong +1$", done.stdout, re.MULTILINE)


def test_two_jobs_give_the_statuses_of_one_and_a_rerun_skips_finished_runs(bench):
    run, server = bench
    done, statuses = run(2, "parallel.jsonl")
    assert statuses == EXPECTED, done.stdout
    served = len(server.requests)
    again, _ = run(2, "parallel.jsonl")
    # the error (its setup fails) is tried again; the three results are kept
    assert "3 finished before, skipped" in again.stdout and "[1/1] setup_fails react#1: error" in again.stdout
    assert len(server.requests) == served
    for case, status in EXPECTED.items():  # the table still shows every case, skipped ones included
        assert re.search(rf"^{case} +react +{re.escape(status_label(status))} ", again.stdout, re.MULTILINE)
