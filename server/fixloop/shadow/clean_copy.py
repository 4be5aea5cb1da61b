"""The gate's clean copy: the run's baseline plus exactly the proposed changes, nothing else from the shadow.

The shadow holds whatever the run left in it — scratch files the proposal drops, files the tests wrote,
links, bytes that are not text (and so no change at all) — and any of them could make tests pass that the
user's copy would fail. The gate runs the tests here instead: on what the user would receive.

For a git shadow the copy is a fresh worktree of the shadow's own clone at its baseline commit (the
user's repository is not involved); otherwise the shadow's files as they were copied, restored from the
user's project where the run changed them. Each check gets a new copy; the previous one is removed.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from fixloop.errors import ShadowError
from fixloop.result import FileChange
from fixloop.shadow.files import check_relpath, remove_tree
from fixloop.shadow.git_runner import git

if TYPE_CHECKING:
    from fixloop.shadow.workspace import ShadowWorkspace

_numbers = itertools.count(1)
_git_lock = threading.Lock()  # several copies of one shadow are made at once (candidates validated together)


def make_clean_copy(shadow: ShadowWorkspace, changes: list[FileChange]) -> Path:
    """A new folder holding the baseline plus `changes`; returns the project root inside it. The copies
    made before are removed first (see `add_clean_copy` for several at once)."""
    remove_clean_copies(shadow)
    return add_clean_copy(shadow, changes)


def add_clean_copy(shadow: ShadowWorkspace, changes: list[FileChange]) -> Path:
    """Like `make_clean_copy`, leaving the other copies alone; `remove_clean_copy` removes it."""
    target = shadow.container / f"verify-{next(_numbers)}"
    top = shadow.git_top
    if top is not None:
        with _git_lock:
            shadow.guard_git()
            git(top, "-c", "checkout.workers=0", "worktree", "add", "--quiet", "--detach", "--force",
                str(target), "HEAD", shadow=True)  # fmt: skip
        root = target / shadow.prefix if shadow.prefix else target
    else:
        root = target
        shadow.write_baseline(root)
    root.mkdir(parents=True, exist_ok=True)
    for change in changes:
        path = root / check_relpath(change.path)
        if change.new_text is None:
            if path.is_symlink() or path.is_file():
                path.unlink()
            continue
        if path.is_symlink() or path.is_dir():
            raise ShadowError(f"cannot verify the fix: {change.path} is not a plain file in the baseline")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(change.new_text.encode("utf-8", "surrogateescape"))
    return root


def remove_clean_copy(shadow: ShadowWorkspace, root: Path) -> None:
    """Remove the copy holding project root `root` (made by `add_clean_copy`)."""
    folder = next((f for f in (root, *root.parents) if f.parent == shadow.container), None)
    if folder is None or not folder.name.startswith("verify-"):
        return
    remove_tree(folder)
    if shadow.git_top is not None and (shadow.git_top / ".git").is_dir():
        with _git_lock, contextlib.suppress(ShadowError):
            git(shadow.git_top, "worktree", "prune", shadow=True)


def remove_clean_copies(shadow: ShadowWorkspace) -> None:
    """Remove the clean copies made so far (and their worktree entries in the shadow's clone)."""
    for folder in shadow.container.glob("verify-*"):
        remove_tree(folder)
    if shadow.git_top is not None and (shadow.git_top / ".git").is_dir():
        with _git_lock, contextlib.suppress(ShadowError):
            git(shadow.git_top, "worktree", "prune", shadow=True)
