"""Through the engine: fixed, error and cancelled runs leave the user's repo byte-for-byte as it was."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from fixloop.errors import FixloopError
from fixloop.shadow import shadows_dir
from support import fix_script, load_fix, repo_snapshot


def dirty(root: Path) -> None:
    """Uncommitted work the run must carry into the shadow and leave alone."""
    (root / "NOTES.md").write_text("my own untracked notes\n")
    first = next(path for path in sorted(root.rglob("*.py")) if ".git" not in path.parts)
    first.write_text(first.read_text() + "\n# my unsaved thought\n")


def no_shadows_left() -> bool:
    return not shadows_dir().exists() or list(shadows_dir().iterdir()) == []


async def test_fixed_run(run_fix, fixture_project) -> None:
    root = fixture_project("demo")
    dirty(root)
    before = repo_snapshot(root)
    outcome = await run_fix(root, fix_script("demo"), test_ids=load_fix("demo")["test_ids"])
    assert outcome.result.status == "fixed", outcome.result.reasons
    assert outcome.result.diff
    assert repo_snapshot(root) == before
    assert no_shadows_left()


async def test_error_run(run_fix, fixture_project) -> None:
    root = fixture_project("demo")
    dirty(root)
    before = repo_snapshot(root)
    with pytest.raises(FixloopError):
        await run_fix(root, [{"fault": "401"}], test_ids=load_fix("demo")["test_ids"])
    assert repo_snapshot(root) == before
    assert no_shadows_left()


async def test_cancelled_run(run_fix, fixture_project) -> None:
    root = fixture_project("demo")
    dirty(root)
    before = repo_snapshot(root)
    slow = [{"delay": 60, "content": "thinking..."}]
    task = asyncio.create_task(run_fix(root, slow, test_ids=load_fix("demo")["test_ids"]))
    for _ in range(600):
        await asyncio.sleep(0.05)
        if not no_shadows_left() or task.done():
            break
    await asyncio.sleep(0.5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert repo_snapshot(root) == before
    assert no_shadows_left()
