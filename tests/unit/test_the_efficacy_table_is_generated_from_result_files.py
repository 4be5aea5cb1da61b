"""The README's and docs/bench.md's efficacy table comes from the bench's result files: the figures are the
judge's, a case one side has not run shows as —, and the committed tables are what the files give."""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import pytest

from fixloop.bench.efficacy import BEGIN, END, Side, case_table, only_one_side, replace_block, summary_table
from fixloop.bench.store import RunRecord
from fixloop.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"


def _row(case: str, status: str, wall: float, rounds: str = "", commit: str = "c1") -> RunRecord:
    return RunRecord(
        case, "sample", 1, "local", status, claimed=status in ("fixed", "claimed_but_wrong"),
        wall_seconds=wall, rounds_tried=rounds, commit=commit, model_id="qwen 1a2b", machine="2 cores",
    )  # fmt: skip


def _write(path: Path, rows: list[RunRecord]) -> Path:
    path.write_text("".join(json.dumps(row.to_json()) + "\n" for row in rows), encoding="utf-8")
    return path


def test_the_summary_counts_the_judges_verdicts_and_the_cases_show_side_by_side(tmp_path: Path):
    before = _write(tmp_path / "b.jsonl", [_row("a", "fixed", 100), _row("b", "not_fixed", 330, "loop")])
    after = _write(
        tmp_path / "a.jsonl",
        [
            _row("a", "fixed", 60, commit="c2"),
            _row("b", "claimed_but_wrong", 200, commit="c2"),
            _row("c", "not_fixed", 300, "suspect,lines,loop", commit="c2"),
        ],
    )
    old, new = Side.load("before", [before]), Side.load("after", [after])
    summary = summary_table(old, new)
    assert "| runs | 2 | 3 |" in summary
    assert "| **fixed** (the judge's verdict) | **1** | **1** |" in summary
    assert "| claimed but wrong | 0 | 1 |" in summary
    assert "| median wall, fixed runs | 100 s | 60 s |" in summary
    assert "| kinds of round tried, runs not fixed | 1–1 | 0–3 |" in summary
    cases = case_table(old, new)
    assert "| a | **fixed**, 100 s | **fixed**, 60 s |" in cases
    assert "| c | — | not fixed, 300 s |" in cases
    assert "c2" in new.origin() and "qwen 1a2b" in new.origin()
    assert only_one_side(old, new) == "Fixed after and not before: none. Fixed before and not after: none.\n"
    unrecorded = Side.load("old", [_write(tmp_path / "o.jsonl", [_row("a", "not_fixed", 300)])])
    assert "| kinds of round tried, runs not fixed | — | — |" in summary_table(unrecorded, unrecorded)


def test_the_block_between_the_markers_is_replaced_and_missing_markers_are_named():
    text = f"intro\n{BEGIN} -->\nold table\n{END}\nafter\n"
    done = replace_block(text, "| new |\n", Path("README.md"))
    assert done.startswith("intro\n" + BEGIN) and "| new |\n" + END in done and "old table" not in done
    assert done.endswith(END + "\nafter\n")
    with pytest.raises(ConfigError, match=r"README\.md has no efficacy table markers"):
        replace_block("no markers here", "x", Path("README.md"))


def test_the_committed_tables_are_what_the_committed_result_files_give():
    """The files and labels the tables were written from are recorded beside the results."""
    sources = json.loads((RESULTS / "efficacy-table.json").read_text(encoding="utf-8"))
    script = runpy.run_path(str(ROOT / "benchmarks" / "efficacy_table.py"))
    sides = [
        Side.load(side["label"], [ROOT / f for f in side["files"]], [Path(f) for f in side["files"]])
        for side in (sources["before"], sources["after"])
    ]
    readme, docs = script["blocks"](*sides)
    for path, block in ((ROOT / "README.md", readme), (ROOT / "docs" / "bench.md", docs)):
        text = path.read_text(encoding="utf-8")
        assert replace_block(text, block, path) == text, (
            f"{path.name}: run benchmarks/efficacy_table.py --write"
        )
