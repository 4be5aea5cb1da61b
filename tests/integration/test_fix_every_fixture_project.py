"""Every fixture project gets fixed: the scripted model makes the recorded fix, real pytest verifies."""

from __future__ import annotations

import subprocess
import sys

import pytest

from support import fix_script, fixture_names, load_fix


@pytest.mark.parametrize("name", fixture_names())
async def test_fixture_project_is_fixed(run_fix, name):
    fix = load_fix(name)
    overrides = {"testTimeout": 5} if fix.get("hangs") else {}
    outcome = await run_fix(name, fix_script(name), **overrides)
    result = outcome.result
    assert result.status == "fixed", (result.summary, result.reasons)
    assert sorted(result.files) == sorted({e["path"] for e in fix["edits"]})
    # the user's project is untouched; the proposal, applied, makes the targets pass
    if fix.get("git", True):
        status = subprocess.run(
            ["git", "status", "--porcelain"], cwd=outcome.root, capture_output=True, text=True, check=True
        ).stdout
        assert status == ""
        subprocess.run(["git", "apply", "-"], cwd=outcome.root, input=result.diff, text=True, check=True)
    else:
        assert not (outcome.root / ".git").exists()
        for change in result.changes:
            assert change.new_text is not None
            (outcome.root / change.path).write_bytes(change.new_text.encode("utf-8"))
    after = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            *fix["test_ids"],
            *fix.get("passing", []),
        ],
        cwd=outcome.root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert after.returncode == 0, after.stdout[-2000:]


async def test_careless_fix_that_breaks_a_passing_test_is_rejected(run_fix):
    fix = load_fix("careless_fix")
    careless = [
        {"tool_calls": [{"name": "edit_file", "arguments": e} for e in fix["careless_edits"]]},
        {"tool_calls": [{"name": "submit", "arguments": {"summary": "careless"}}]},
    ]
    outcome = await run_fix("careless_fix", careless, attempts=1)
    assert outcome.result.status == "not_fixed"
    assert any(passing in " ".join(outcome.result.reasons) for passing in fix["passing"])
