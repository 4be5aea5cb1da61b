"""Every own bench project fails exactly its case's ids, passes the rest, and its known fix turns it green."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from support import project_python

BENCH_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "bench"
sys.path.insert(0, str(BENCH_DIR))

from suite import run_suite  # noqa: E402

PROJECTS = sorted(p.name for p in (BENCH_DIR / "projects").iterdir() if (p / "case.json").is_file())


def copy_case_project(name: str, dest: Path) -> Path:
    """The project of a case without its case.json, as bench hands it to a run."""
    shutil.copytree(
        BENCH_DIR / "projects" / name, dest, ignore=shutil.ignore_patterns("case.json", "__pycache__")
    )
    return dest


def apply_fix(root: Path, edits: list[dict[str, str]]) -> None:
    for edit in edits:
        path = root / edit["path"]
        text = path.read_text(encoding="utf-8")
        assert text.count(edit["old_text"]) == 1, f"{edit['path']}: old_text must occur once"
        path.write_text(text.replace(edit["old_text"], edit["new_text"]), encoding="utf-8")


@pytest.mark.parametrize("name", PROJECTS)
def test_own_project_fails_its_ids_and_the_known_fix_makes_the_suite_green(name: str, tmp_path: Path) -> None:
    case = json.loads((BENCH_DIR / "projects" / name / "case.json").read_text(encoding="utf-8"))
    fix = json.loads((BENCH_DIR / "fixes" / f"{name}.json").read_text(encoding="utf-8"))
    root = copy_case_project(name, tmp_path / name)

    before = run_suite(root, project_python())
    assert before.failing == set(case["failing_test_ids"]), before.tail
    assert {node for node, outcome in before.outcomes.items() if outcome == "passed"} == set(fix["passing"])

    apply_fix(root, fix["edits"])
    after = run_suite(root, project_python())
    assert not after.failing, after.tail
    assert set(after.outcomes) == set(before.outcomes)
