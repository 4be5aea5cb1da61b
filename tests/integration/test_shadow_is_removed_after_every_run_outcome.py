"""Through the engine: fixed, error and cancelled runs leave the user's repo byte-for-byte as it was."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from fixloop.errors import FixloopError
from fixloop.shadow import shadows_dir
from support import fix_script, load_fix


def snapshot(repo: Path) -> dict[str, object]:
    """Files (with .git, byte for byte, with mtimes), refs, worktrees, stash and branches."""
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    files = {
        path.relative_to(repo).as_posix(): (path.stat().st_mtime_ns, path.read_bytes())
        for path in sorted(repo.rglob("*"))
        if path.is_file()
    }
    commands = [["for-each-ref"], ["worktree", "list", "--porcelain"], ["stash", "list"], ["branch", "-a"]]
    return {
        "files": files,
        **{
            " ".join(args): subprocess.run(
                ["git", *args], cwd=repo, capture_output=True, text=True, env=env, check=True
            ).stdout
            for args in commands
        },
    }


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
    before = snapshot(root)
    outcome = await run_fix(root, fix_script("demo"), test_ids=load_fix("demo")["test_ids"])
    assert outcome.result.status == "fixed", outcome.result.reasons
    assert outcome.result.diff
    assert snapshot(root) == before
    assert no_shadows_left()


async def test_error_run(run_fix, fixture_project) -> None:
    root = fixture_project("demo")
    dirty(root)
    before = snapshot(root)
    with pytest.raises(FixloopError):
        await run_fix(root, [{"fault": "401"}], test_ids=load_fix("demo")["test_ids"])
    assert snapshot(root) == before
    assert no_shadows_left()


async def test_cancelled_run(run_fix, fixture_project) -> None:
    root = fixture_project("demo")
    dirty(root)
    before = snapshot(root)
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
    assert snapshot(root) == before
    assert no_shadows_left()
