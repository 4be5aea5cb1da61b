"""File helpers of the shadow: exact text reads, relative-path checks, copying entries, removing trees."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from pathlib import Path

from fixloop.errors import ShadowError


def read_text(path: Path) -> str | None:
    """The file's text exactly (CRLF kept); None when absent, a directory or not UTF-8."""
    try:
        if path.is_symlink() or not path.is_file():
            return None
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def check_relpath(rel: str) -> str:
    rel = rel.replace("\\", "/")
    parts = rel.split("/")
    if not rel or rel.startswith("/") or ".." in parts or (parts[0].endswith(":")) or ".git" in parts:
        raise ShadowError(f"refusing path {rel!r}: not a relative path inside the project")
    return "/".join(part for part in parts if part not in ("", "."))


def remove_tree(path: Path) -> None:
    def retry(function, target, _exc_info) -> None:  # type: ignore[no-untyped-def]
        with contextlib.suppress(OSError):
            os.chmod(target, stat.S_IWRITE | stat.S_IREAD | stat.S_IEXEC)
            os.chmod(os.path.dirname(target), stat.S_IWRITE | stat.S_IREAD | stat.S_IEXEC)
            function(target)

    if path.exists() or path.is_symlink():
        shutil.rmtree(path, onerror=retry)


def copy_entry(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.is_dir():
        remove_tree(target)
    if source.is_symlink():
        os.symlink(os.readlink(source), target)
    else:
        shutil.copy2(source, target)
