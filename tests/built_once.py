"""Expensive builds shared by every xdist worker of one test run: made once under a file lock, then reused;
a build with a key is kept between runs too, in the test cache, until its key changes."""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest
from filelock import FileLock

# Builds kept between runs live here ($FIXLOOP_TEST_CACHE, else the user's cache folder); "off" keeps none.
CACHE_ENV = "FIXLOOP_TEST_CACHE"
_USER_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")  # before tests patch it


def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The temporary folder of the whole run: the workers' base folders lie inside it."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def kept_root() -> Path | None:
    """Where keyed builds are kept between runs, or None when the cache is off."""
    chosen = os.environ.get(CACHE_ENV, "")
    if chosen == "off":
        return None
    return Path(chosen) if chosen else _USER_CACHE / "fixloop-tests"


def build_key(*sources: Path, extra: Iterable[str] = ()) -> str:
    """A key that changes with the text of `sources`, `extra`, and the interpreter the suite runs on (its
    base installation: a venv made from the suite's venv is made from that, wherever the checkout lies)."""
    digest = hashlib.sha256(f"{sys.version}\n{sys.base_prefix}\n".encode())
    for source in sources:
        digest.update(source.read_bytes())
    for item in extra:
        digest.update(item.encode())
    return digest.hexdigest()[:16]


def built_once(
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    build: Callable[[Path], None],
    *,
    key: str = "",
    still_good: Callable[[Path], bool] = lambda folder: True,
) -> Path:
    """The folder `name`, filled by `build(folder)` in the first worker that asks; the others wait for it.
    A build that raises leaves nothing behind, so the next worker that asks tries again.

    With a `key` (see `build_key`), the build is kept between runs in the test cache: a later run reuses it
    while the key is the same and `still_good(folder)` holds (a test that left it changed gets it rebuilt),
    and a build of the same name under another key is removed."""
    kept = kept_root() if key else None
    base = kept if kept is not None else run_folder(tmp_path_factory) / "built-once"
    folder = base / (f"{name}-{key}" if kept is not None else name)
    base.mkdir(parents=True, exist_ok=True)
    done = folder.with_name(f"{folder.name}.done")
    with FileLock(folder.with_name(f"{folder.name}.lock")):
        if done.exists() and kept is not None and not still_good(folder):
            done.unlink()
        if not done.exists():
            if kept is not None:
                _remove_other_keys(kept, name, folder)
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            try:
                build(folder)
            except BaseException:
                shutil.rmtree(folder, ignore_errors=True)
                raise
            done.touch()
    return folder


def _remove_other_keys(kept: Path, name: str, current: Path) -> None:
    """Builds of `name` under an older key (a key is 16 hex digits after the name)."""
    for old in kept.glob(f"{name}-*.done"):
        stem = old.name[: -len(".done")]
        suffix = stem[len(name) + 1 :]
        if stem != current.name and len(suffix) == 16 and all(c in "0123456789abcdef" for c in suffix):
            old.unlink(missing_ok=True)
            for made in kept.glob(f"{stem}*"):  # its folder and what it kept beside it (a pickle, an env)
                if made.is_dir() and not made.is_symlink():
                    shutil.rmtree(made, ignore_errors=True)
                else:
                    made.unlink(missing_ok=True)
