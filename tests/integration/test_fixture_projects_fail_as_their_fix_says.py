"""Every fixture project fails exactly as its recorded fix says, and the recorded fix makes it pass."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from scripted_model import normalize_script
from support import (
    PROJECTS_DIR,
    SCRIPTS_DIR,
    TEXT_STYLES,
    apply_edits,
    copy_project,
    fix_script,
    fixture_names,
    load_fix,
    project_python,
    script_files,
    text_fix_script,
)

OUTCOME = re.compile(r"^(PASSED|FAILED|ERROR) (\S+)", re.MULTILINE)
HANG_TIMEOUT_S = 5
SHAPES = {
    "helper_chain", "src_layout", "raises_exception", "parametrized", "class_method", "conftest_fixture",
    "long_output", "hangs", "two_failures", "no_git", "careless_fix", "demo", "unicode_crlf",
}  # fmt: skip


def run_pytest(root: Path, *test_ids: str, timeout: float = 60) -> dict[str, str]:
    """Run the real pytest in root and return {node id: PASSED | FAILED | ERROR}."""
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # the fixtures need no plugins; startup is most of the cost
    completed = subprocess.run(
        [project_python(), "-m", "pytest", "-p", "no:cacheprovider", "-rA", "-q", *test_ids],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )
    outcomes = {node: outcome for outcome, node in OUTCOME.findall(completed.stdout)}
    assert outcomes, (
        f"no test outcomes from pytest in {root}:\n{completed.stdout[-3000:]}\n{completed.stderr}"
    )
    return outcomes


def line_endings(root: Path) -> dict[str, bool]:
    """For each file: whether it uses CRLF line endings."""
    return {
        str(path.relative_to(root)): b"\r\n" in path.read_bytes()
        for path in root.rglob("*.py")
        if ".git" not in path.parts
    }


def test_every_required_shape_and_some_easy_ones_exist() -> None:
    names = set(fixture_names())
    assert SHAPES <= names
    assert len([n for n in names if n.startswith("easy_")]) >= 2
    assert sorted(p.name for p in PROJECTS_DIR.iterdir() if p.is_dir()) == sorted(names)


@pytest.mark.parametrize("name", fixture_names())
def test_recorded_fix_turns_the_targets_green(name: str, tmp_path: Path) -> None:
    fix = load_fix(name)
    assert fix["name"] == name and fix["test_ids"] and fix["edits"] and fix["description"]
    root = copy_project(name, tmp_path / name)
    assert (root / ".git").is_dir() == fix["git"]
    endings = line_endings(root)
    targets, passing = set(fix["test_ids"]), set(fix["passing"])

    if fix.get("hangs"):
        assert run_pytest(root, *sorted(passing)) == dict.fromkeys(passing, "PASSED")
        with pytest.raises(subprocess.TimeoutExpired):
            run_pytest(root, *sorted(targets), timeout=HANG_TIMEOUT_S)
    else:
        before = run_pytest(root)
        assert {node for node, outcome in before.items() if outcome != "PASSED"} == targets
        assert {node for node, outcome in before.items() if outcome == "PASSED"} == passing

    apply_edits(root, fix["edits"])
    assert run_pytest(root) == dict.fromkeys(targets | passing, "PASSED")
    assert line_endings(root) == endings


@pytest.mark.parametrize("name", [n for n in fixture_names() if load_fix(n).get("careless_edits")])
def test_careless_fix_passes_the_target_but_breaks_another_test(name: str, tmp_path: Path) -> None:
    fix = load_fix(name)
    root = copy_project(name, tmp_path / name, git=False)
    apply_edits(root, fix["careless_edits"])
    after = run_pytest(root)
    assert all(after[node] == "PASSED" for node in fix["test_ids"])
    assert any(after[node] != "PASSED" for node in fix["passing"])


def test_crlf_fixture_really_has_crlf_and_non_ascii() -> None:
    raw = (PROJECTS_DIR / "unicode_crlf" / "greetings.py").read_bytes()
    assert raw.count(b"\r\n") == raw.count(b"\n") > 5
    assert "✓".encode() in raw and "🎉".encode() in raw


@pytest.mark.parametrize("name", fixture_names())
def test_fix_scripts_perform_the_recorded_fix(name: str) -> None:
    fix = load_fix(name)
    expected = [
        ("read_file", {"path": path}) for path in dict.fromkeys(edit["path"] for edit in fix["edits"])
    ]
    expected += [("edit_file", edit) for edit in fix["edits"]]
    expected += [("run_tests", {"test_ids": fix["test_ids"]}), ("submit", {"summary": fix["description"]})]
    turns = normalize_script(fix_script(name))["turns"]
    calls = [(c["name"], json.loads(c["arguments"])) for turn in turns for c in turn["tool_calls"]]
    assert calls == expected
    assert all(turn["content"] for turn in turns)
    assert all(turn["stream"] is False for turn in fix_script(name, stream=False))
    for style in TEXT_STYLES:
        texts = [turn["content"] for turn in normalize_script(text_fix_script(name, style))["turns"]]
        assert [action_of(style, text) for text in texts] == expected


def action_of(style: str, text: str) -> tuple[str, dict]:
    """Parse one text-protocol action back (the inverse of support.text_action)."""
    if style == "react":
        match = re.fullmatch(r"Thought: .+\nAction: (\w+)\nAction Input: (.+)", text, re.DOTALL)
        assert match, text
        return match[1], json.loads(match[2])
    pattern = r".+\n<tool_call>\n(.+)\n</tool_call>" if style == "tool_call_tag" else r"```json\n(.+)\n```"
    match = re.fullmatch(pattern, text, re.DOTALL)
    assert match, text
    call = json.loads(match[1])
    return call["name"], call["arguments"]


def test_script_files_match_the_recorded_fixes() -> None:
    expected = script_files()
    assert sorted(p.name for p in SCRIPTS_DIR.glob("*.json")) == sorted(expected), (
        "run: python tests/support.py"
    )
    for file_name, script in expected.items():
        on_disk = json.loads((SCRIPTS_DIR / file_name).read_text(encoding="utf-8"))
        assert on_disk == script, f"fixtures/scripts/{file_name} is stale; run: python tests/support.py"
