"""The interpreter the suite's fixture projects run their tests with: a venv holding pytest and its
dependencies only, as a project's own environment does, instead of fixloop's dev venv, whose pytest
plugins (pytest-lsp with pygls and lsprotocol, pytest-asyncio, anyio, xdist, timeout) every pytest run
would load: about 1.3 CPU s a run there against 0.35 s here, and the suite starts thousands of them.

The venv is made with `venv --without-pip` and its site-packages links the suite's own installs of pytest
and what it requires (so the versions are the suite's exactly); made in milliseconds, kept in the test
cache under a key of the interpreter and those installs. The suite activates it ($VIRTUAL_ENV), so fixloop
finds it the way it finds a developer's activated environment; projects with their own venv keep theirs.
"""

from __future__ import annotations

import hashlib
import importlib.metadata as metadata
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from packaging.requirements import Requirement

ROOTS = ("pytest",)  # what a fixture project needs; coverage is linked in by fixloop itself when asked


def installs() -> dict[str, metadata.Distribution]:
    """pytest and what it requires on this interpreter, by normalized name."""
    found: dict[str, metadata.Distribution] = {}
    todo = list(ROOTS)
    while todo:
        dist = metadata.distribution(todo.pop())
        name = str(dist.metadata["Name"]).lower().replace("_", "-")
        if name in found:
            continue
        found[name] = dist
        for text in dist.requires or ():
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return found


def top_entries(dist: metadata.Distribution) -> set[Path]:
    """The entries of site-packages a distribution installed (packages, modules, its .dist-info)."""
    site = Path(str(dist.locate_file("")))
    tops = {site / file.parts[0] for file in dist.files or () if file.parts[0] not in ("..", "__pycache__")}
    return {top for top in tops if top.exists()}


def key(found: dict[str, metadata.Distribution]) -> str:
    digest = hashlib.sha256(f"{sys.version}\n{sys.base_prefix}\n{sys.prefix}\n".encode())
    for name in sorted(found):
        digest.update(f"{name}=={found[name].version}\n".encode())
    return digest.hexdigest()[:16]


def build(folder: Path, found: dict[str, metadata.Distribution]) -> None:
    """A venv at `folder` whose site-packages links the entries of `found`."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    site = folder / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    if sys.platform == "win32":
        site = folder / "Lib" / "site-packages"
    for dist in found.values():
        for top in top_entries(dist):
            (site / top.name).symlink_to(top, target_is_directory=top.is_dir())


def python_of(folder: Path) -> Path:
    return folder / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


def ensure(base: Path) -> Path:
    """The venv under `base` (made there unless a whole one is there already); its folder."""
    found = installs()
    folder = base / f"project-python-{key(found)}"
    if python_of(folder).exists() and (folder / ".done").exists():
        return folder
    base.mkdir(parents=True, exist_ok=True)
    making = Path(tempfile.mkdtemp(prefix="project-python-", dir=base))
    try:
        build(making / "venv", found)
        (making / "venv" / ".done").touch()
        try:
            (making / "venv").rename(folder)
        except OSError:  # another process made it first
            pass
    finally:
        shutil.rmtree(making, ignore_errors=True)
    return folder


def activate(folder: Path) -> None:
    """Make `folder` this process's (and its children's) activated environment."""
    os.environ["VIRTUAL_ENV"] = str(folder)
