"""`fixloop bench --shard K/N` runs a part of the cases chosen by name (the parts are disjoint and make up the
whole, whatever the order); `fixloop bench report FILE…` merges the parts' results into one table, the
latest row of a run winning; each row says which fixloop, model and machine made it."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

from fixloop.bench.cases import BenchCase
from fixloop.bench.merge import merge_results
from fixloop.bench.shards import in_shard, parse_shard
from scripted_model import ScriptedModelServer
from support import scripted_model_env, write_project

GOOD_CALC = "def add(a, b):\n    return a + b\n"
TURN = {
    "content": "add subtracts; rewriting calc.py.",
    "tool_calls": [
        {"name": "write_file", "arguments": {"path": "calc.py", "content": GOOD_CALC}},
        {"name": "submit", "arguments": {"summary": "add adds"}},
    ],
}
TEST_CALC = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
NAMES = [f"case_{index:03d}" for index in range(60)]


def test_the_shards_are_disjoint_make_up_the_subset_and_do_not_depend_on_its_order():
    cases = [BenchCase(name, Path(name), ("tests/test_x.py::test_x",)) for name in NAMES]
    parts = [[case.name for case in in_shard(cases, (part, 4))] for part in range(1, 5)]
    assert sorted(name for part in parts for name in part) == NAMES
    assert all(part for part in parts)  # 60 names over 4 parts: none empty
    shuffled = random.Random(7).sample(cases, len(cases))
    for part in range(1, 5):
        assert sorted(case.name for case in in_shard(shuffled, (part, 4))) == sorted(parts[part - 1])
    # a case keeps its shard when the subset around it changes
    fewer = [case for case in cases if case.name != NAMES[0]]
    assert [c.name for c in in_shard(fewer, (1, 4))] == [n for n in parts[0] if n != NAMES[0]]
    assert parse_shard(" 2/4 ") == (2, 4) and parse_shard(None) is None


def _row(case: str, mode: str, status: str, finished: str, **more: object) -> str:
    record = {"case": case, "mode": mode, "repeat": 1, "model": "m", "status": status, "finished": finished}
    return json.dumps({**record, **more}) + "\n"


def test_the_report_merges_files_and_the_latest_row_of_a_run_wins(tmp_path: Path):
    first, second = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    first.write_text(
        _row("a", "sample", "not_fixed", "2026-01-01T10:00:00")
        + _row("b", "sample", "fixed", "2026-01-01T10:05:00")  # a row from before hidden checks
    )
    second.write_text(
        _row(
            "a", "sample", "fixed", "2026-01-02T09:00:00", commit="abc123", machine="2 cores", hidden_checks=1
        )
        + _row("b", "sample", "error", "2025-12-31T00:00:00")  # older: the first file's row wins
        + _row("c", "react", "not_fixed", "2026-01-02T09:30:00")
    )
    records, summary = merge_results([first, second])
    assert {(r.case, r.mode): r.status for r in records} == {
        ("a", "sample"): "fixed",
        ("b", "sample"): "fixed_unchecked",  # judged on the visible tests alone
        ("c", "react"): "not_fixed",
    }
    assert summary == "bench report: merged 2 file(s), 5 row(s): 3 run(s) (2 older duplicate(s) dropped)"
    assert next(r for r in records if r.case == "a").commit == "abc123"


def test_two_shards_run_apart_and_their_report_is_one_table(tmp_path: Path):
    cases = tmp_path / "cases"
    names = ["alpha", "beta", "gamma", "delta"]
    for name in names:
        write_project(
            cases / name,
            {
                "case.json": '{"failing_test_ids": ["tests/test_calc.py::test_add"]}',
                "calc.py": "def add(a, b):\n    return a - b\n",
                "tests/test_calc.py": TEST_CALC,
            },
        )
    server = ScriptedModelServer([TURN] * 20)
    server.start()
    env = scripted_model_env(server.base_url, tmp_path / "cache")

    def fixloop(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-m", "fixloop", "bench", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done

    try:
        for part in (1, 2):
            done = fixloop(
                str(cases), "--shard", f"{part}/2", "--results", str(tmp_path / f"part{part}.jsonl")
            )
            assert f"shard {part}/2" in done.stdout
    finally:
        server.stop()
    rows = [
        json.loads(line)
        for part in (1, 2)
        for line in (tmp_path / f"part{part}.jsonl").read_text().splitlines()
    ]
    assert sorted(row["case"] for row in rows) == sorted(names)
    assert all(row["commit"] and row["model_id"] == "scripted" and "cores" in row["machine"] for row in rows)

    report = fixloop(
        "report",
        str(tmp_path / "part1.jsonl"),
        str(tmp_path / "part2.jsonl"),
        "--report",
        str(tmp_path / "all.md"),
    )
    assert "bench report: merged 2 file(s), 4 row(s): 4 run(s)" in report.stdout
    for name in names:
        assert f"{name} " in report.stdout
    assert "alpha" in (tmp_path / "all.md").read_text()
