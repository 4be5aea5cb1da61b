"""Source files the build writes and git ignores: the version files of setuptools-scm, hatch-vcs and pdm.

The package imports them (`from ._version import version`), so a shadow without them could not import the
package at all; the shadow copies them from the user's tree although git ignores them. Only the files the
project's pyproject.toml names are taken: an ignored `.py` file is otherwise often local configuration.
"""

from __future__ import annotations

import tomllib
from pathlib import Path, PurePosixPath
from typing import Any


def build_written_files(project: Path) -> list[str]:
    """The version files `project`'s pyproject.toml tells the build to write, relative to `project`."""
    try:
        data = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return []
    tool = _table(data, "tool")
    scm = _table(tool, "setuptools_scm")
    hatch_vcs = _table(_table(_table(_table(tool, "hatch"), "build"), "hooks"), "vcs")
    pdm_version = _table(_table(tool, "pdm"), "version")
    named = [
        scm.get("version_file"),
        scm.get("write_to"),
        hatch_vcs.get("version-file"),
        pdm_version.get("write_to"),
    ]
    files = []
    for name in named:
        if isinstance(name, str) and name.endswith(".py"):
            rel = PurePosixPath(name.replace("\\", "/"))
            if not rel.is_absolute() and ".." not in rel.parts:
                files.append(rel.as_posix())
    return list(dict.fromkeys(files))


def _table(data: Any, key: str) -> dict[str, Any]:
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}
