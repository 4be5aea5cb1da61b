"""The own projects' hidden checks pass the known fix and catch every recorded wrong-but-plausible fix;
each hidden check earns its place by failing the buggy version or a wrong fix."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from support import project_python

BENCH_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "bench"
sys.path.insert(0, str(BENCH_DIR))

from suite import SuiteRun, run_suite  # noqa: E402


def case_of(name: str) -> dict:
    return json.loads((BENCH_DIR / "projects" / name / "case.json").read_text(encoding="utf-8"))


PROJECTS = sorted(
    p.name
    for p in (BENCH_DIR / "projects").iterdir()
    if (p / "case.json").is_file() and "hidden_checks" in case_of(p.name)
)


def hidden_files(name: str) -> dict[str, Path]:
    """{path in the project: file in the hidden folder}, by the mirror rule."""
    folder = (BENCH_DIR / "projects" / name / case_of(name)["hidden_checks"]).resolve()
    return {
        path.relative_to(folder).as_posix(): path
        for path in sorted(folder.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def wrong_fixes(name: str) -> list[dict]:
    path = BENCH_DIR / "wrong_fixes" / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8"))["wrong_fixes"] if path.is_file() else []


def variant(name: str, dest: Path, edits: list[dict[str, str]]) -> Path:
    """A copy of the project with `edits` applied and the hidden files placed, as the judge would see it."""
    shutil.copytree(
        BENCH_DIR / "projects" / name, dest, ignore=shutil.ignore_patterns("case.json", "__pycache__")
    )
    for edit in edits:
        path = dest / edit["path"]
        text = path.read_text(encoding="utf-8")
        assert text.count(edit["old_text"]) == 1, f"{edit['path']}: old_text must occur once"
        path.write_text(text.replace(edit["old_text"], edit["new_text"]), encoding="utf-8")
    for relative, source in hidden_files(name).items():
        assert not (dest / relative).exists(), f"{relative}: a hidden file may not replace a project file"
        (dest / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, dest / relative)
    return dest


def split(run: SuiteRun, hidden: set[str]) -> tuple[dict[str, str], dict[str, str]]:
    """(visible outcomes, hidden outcomes) of one run of the whole suite with the hidden files in place."""
    visible = {node: outcome for node, outcome in run.outcomes.items() if node.split("::")[0] not in hidden}
    return visible, {node: outcome for node, outcome in run.outcomes.items() if node not in visible}


def failing(outcomes: dict[str, str]) -> set[str]:
    return {node for node, outcome in outcomes.items() if outcome != "passed"}


@pytest.mark.parametrize("name", PROJECTS)
def test_hidden_checks_pass_the_known_fix_and_catch_each_wrong_one(name: str, tmp_path: Path) -> None:
    case = case_of(name)
    fix = json.loads((BENCH_DIR / "fixes" / f"{name}.json").read_text(encoding="utf-8"))
    hidden = {path for path in hidden_files(name) if Path(path).name.startswith("test_hidden_")}
    assert hidden, f"{name}: the hidden folder holds no test_hidden_*.py"
    assert case["reference"]["path"] in case["bug_files"]
    assert case["reference"]["text"] in "\n".join(edit["new_text"] for edit in fix["edits"])

    buggy = run_suite(variant(name, tmp_path / "buggy", []), project_python())
    buggy_visible, buggy_hidden = split(buggy, hidden)
    assert failing(buggy_visible) == set(case["failing_test_ids"]), buggy.tail
    assert {node.split("::")[0] for node in buggy_hidden} == hidden, "every hidden file is collected"

    fixed = run_suite(variant(name, tmp_path / "fixed", fix["edits"]), project_python())
    assert set(fixed.outcomes) == set(buggy.outcomes)
    assert not failing(fixed.outcomes), fixed.tail

    caught = failing(buggy_hidden)
    for index, wrong in enumerate(wrong_fixes(name)):
        run = run_suite(variant(name, tmp_path / f"wrong{index}", wrong["edits"]), project_python())
        visible, hidden_outcomes = split(run, hidden)
        assert not failing(visible), f"{wrong['name']} must pass the visible suite:\n{run.tail}"
        assert failing(hidden_outcomes), f"{wrong['name']}: no hidden check fails it"
        caught |= failing(hidden_outcomes)

    idle = sorted(set(buggy_hidden) - caught)
    assert not idle, f"hidden checks that fail neither the buggy version nor any wrong fix: {idle}"
