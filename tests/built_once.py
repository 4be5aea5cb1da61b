"""Expensive builds shared by every xdist worker of one test run: made once under a file lock, then reused."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock


def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The temporary folder of the whole run: the workers' base folders lie inside it."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def built_once(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], None]) -> Path:
    """The folder `name`, filled by `build(folder)` in the first worker that asks; the others wait for it.
    A build that raises leaves nothing behind, so the next worker that asks tries again."""
    folder = run_folder(tmp_path_factory) / "built-once" / name
    folder.parent.mkdir(parents=True, exist_ok=True)
    done = folder.with_name(f"{name}.done")
    with FileLock(folder.with_name(f"{name}.lock")):
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            try:
                build(folder)
            except BaseException:
                shutil.rmtree(folder, ignore_errors=True)
                raise
            done.touch()
    return folder
