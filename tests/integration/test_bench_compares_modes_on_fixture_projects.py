"""`fixloop bench fixtures/projects --mode react,oneshot`: fixture projects are cases; the oneshot baseline
sends one prompt and applies the reply's code by AST; both modes are judged and shown side by side (the demo
has no hidden checks: a fix of it is `fixed_unchecked`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scripted_model import ScriptedModelServer
from support import PROJECTS_DIR, fix_script

ONESHOT_REPLY = """factorial adds instead of multiplying. The corrected function:

```python
def factorial(n: int) -> int:
    result = 1
    for i in range(2, n + 1):
        result *= i
    return result
```"""


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory):
    work = tmp_path_factory.mktemp("bench")
    (work / "subset.txt").write_text("# the demo only\ndemo\n")
    # react's tool calls, oneshot's reply, then sample's best guess (right at once: the round ends there)
    with ScriptedModelServer(
        [*fix_script("demo"), {"content": ONESHOT_REPLY}, {"content": "mathutils.py\n" + ONESHOT_REPLY}]
    ) as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("FIXLOOP_", "OPENAI_"))}
        env.update(
            FIXLOOP_BASE_URL=server.base_url,
            FIXLOOP_MODEL="scripted",
            FIXLOOP_MUTANTS="off",
            FIXLOOP_POOL_SHARE="0",
            FIXLOOP_API_KEY="none",
            XDG_CACHE_HOME=str(work / "cache"),
            PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
        )
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "fixloop",
                "bench",
                str(PROJECTS_DIR),
                "--subset",
                str(work / "subset.txt"),
                "--mode",
                "react,oneshot,sample",
                "--results",
                str(work / "results.jsonl"),
                "--report",
                str(work / "report.html"),
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        requests = list(server.requests)
    assert done.returncode == 0, done.stdout + done.stderr
    records = {r["mode"]: r for r in map(json.loads, (work / "results.jsonl").read_text().splitlines())}
    return done, records, requests, work


def test_oneshot_sends_the_failure_and_code_once_and_its_reply_is_applied_by_ast(compared):
    _done, records, requests, _work = compared
    oneshot = records["oneshot"]
    assert oneshot["status"] == "fixed_unchecked" and oneshot["claimed"] is False and oneshot["steps"] == 1
    assert oneshot["edited_bug_file"] is True  # fixtures/fixes/demo.json edits mathutils.py
    diff = oneshot["diff"]
    assert diff.startswith("--- a/mathutils.py\n") and diff.count("+++ ") == 1
    assert "-        result += i\n+        result *= i\n" in diff and "-# Small math helpers." not in diff
    asked = [request for request in requests if "tools" not in request][-1]  # sample's request has tools
    prompt = asked["messages"][-1]["content"]
    assert "factorial(5) should be 1 * 2 * 3 * 4 * 5 = 120" in prompt and "result += i" in prompt
    assert "```python" in prompt


def test_both_modes_are_judged_and_shown_side_by_side_with_a_report(compared):
    done, records, _requests, work = compared
    assert records["react"]["status"] == "fixed_unchecked" and records["react"]["claimed"] is True
    assert "fixed only by react: none" in done.stdout and "fixed only by oneshot: none" in done.stdout
    assert any(line.split() == ["react", "oneshot", "sample"] for line in done.stdout.splitlines())
    report = (work / "report.html").read_text()
    assert report.count("<tr>") >= 4
    assert Path(records["react"]["transcript"]).as_uri() in report
    assert Path(records["oneshot"]["transcript"]).as_uri() in report


def test_sample_mode_proposes_a_verified_candidate(compared):
    _done, records, requests, _work = compared
    sample = records["sample"]
    assert sample["status"] == "fixed_unchecked" and sample["claimed"] is True and sample["attempts"] == 1
    assert "-        result += i\n+        result *= i\n" in sample["diff"]
    assert "the corrected function(s)" in requests[-1]["messages"][-1]["content"]
    assert sample["origin"] == "start"  # the model's first round found it (not one-token search)
    assert records["react"]["origin"] == "loop" and records["oneshot"]["origin"] == ""


def test_the_bench_shows_distinct_candidates_per_round(compared):
    done, records, _requests, _work = compared
    assert records["sample"]["distinct"] == [1] and records["sample"]["drawn"] == [1]  # right at once
    assert records["react"]["distinct"] == [] and records["oneshot"]["distinct"] == []  # no round
    lines = done.stdout.splitlines()
    header = next(line for line in lines if line.startswith("case ") and "distinct/round" in line)
    sample_row = next(line for line in lines if line.split()[:2] == ["demo", "sample"])
    assert sample_row.split()[-1] == "1/1" and header.split()[-1] == "distinct/round"
    per_round = next(line for line in lines if line.startswith("distinct/drawn per round"))
    assert per_round.split()[-3:] == ["-", "-", "1/1"]
