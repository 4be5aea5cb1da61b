"""One release number: fixloop.__version__ (the wheel's, through pyproject's dynamic version) is the VS Code
extension's and the Neovim plugin's, and CHANGELOG.md has a section for it; the package metadata names
the systems fixloop runs on and no placeholder repository."""

from __future__ import annotations

import json
import re
import tomllib

from fixloop import __version__
from support import REPO_ROOT


def test_the_wheel_the_extension_and_the_neovim_plugin_share_one_version():
    pyproject = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    assert "version" in pyproject["project"]["dynamic"] and "version" not in pyproject["project"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "fixloop.__version__"}
    extension = json.loads((REPO_ROOT / "client-vscode" / "package.json").read_text())
    assert extension["version"] == __version__
    lua = (REPO_ROOT / "client-neovim" / "lua" / "fixloop" / "config.lua").read_text()
    assert re.search(r"^M\.VERSION = '([^']+)'", lua, re.M)[1] == __version__  # type: ignore[index]
    changelog = (REPO_ROOT / "CHANGELOG.md").read_text()
    assert re.search(rf"^## \[{re.escape(__version__)}\]", changelog, re.M), "CHANGELOG.md: no section"


def test_the_metadata_names_the_systems_and_no_placeholder_repository():
    pyproject = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    classifiers = pyproject["project"]["classifiers"]
    for system in ("POSIX :: Linux", "MacOS", "Microsoft :: Windows"):
        assert f"Operating System :: {system}" in classifiers
    for minor in range(11, 15):
        assert f"Programming Language :: Python :: 3.{minor}" in classifiers
    for text in (
        (REPO_ROOT / "pyproject.toml").read_text(),
        (REPO_ROOT / "client-vscode" / "package.json").read_text(),
    ):
        assert "github.com/fixloop" not in text
