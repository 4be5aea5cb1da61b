"""Workspace.list_files shows the project's files the way git would keep them, never secrets or caches."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from fixloop.errors import PathError
from fixloop.tools.gitignore import GitIgnore, parse_rules
from fixloop.tools.workspace import Workspace


def make(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


LAYOUT = {
    ".gitignore": "build/\n*.log\n/local.cfg\n!keep.log\ndocs/**/*.tmp\n",
    "src/app.py": "x = 1\n",
    "src/util.py": "",
    "src/__pycache__/app.cpython-311.pyc": "",
    "src/local.cfg": "kept: only the root one is ignored\n",
    "local.cfg": "",
    "build/out.py": "",
    "debug.log": "",
    "keep.log": "",
    "docs/a/b/c.tmp": "",
    "docs/a/index.md": "",
    "tests/test_app.py": "",
    ".venv/lib/site.py": "",
    "venv/lib/site.py": "",
    "node_modules/x/index.js": "",
    ".env": "SECRET=1\n",
    "deploy/server.pem": "",
    ".git/config": "",
}
EXPECTED = [
    ".gitignore",
    "docs/a/index.md",
    "keep.log",
    "src/app.py",
    "src/local.cfg",
    "src/util.py",
    "tests/test_app.py",
]


def test_walk_respects_gitignore_and_skips_caches_and_secrets(tmp_path: Path) -> None:
    layout = {k: v for k, v in LAYOUT.items() if not k.startswith(".git/")}
    ws = Workspace(make(tmp_path, layout))
    assert ws.list_files() == EXPECTED


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_repo_uses_git_and_includes_untracked(tmp_path: Path) -> None:
    layout = {k: v for k, v in LAYOUT.items() if not k.startswith(".git/")}
    root = make(tmp_path, layout)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "src/app.py"], check=True)
    ws = Workspace(root)
    assert ws.list_files() == EXPECTED


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_repo_leaves_out_deleted_tracked_files(tmp_path: Path) -> None:
    root = make(tmp_path, {"a.py": "", "b.py": ""})
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "."], check=True)
    (root / "b.py").unlink()
    assert Workspace(root).list_files() == ["a.py"]


def test_nested_gitignore_applies_to_its_folder(tmp_path: Path) -> None:
    root = make(
        tmp_path, {"pkg/.gitignore": "*.gen.py\n", "pkg/a.gen.py": "", "pkg/a.py": "", "b.gen.py": ""}
    )
    assert Workspace(root).list_files() == ["b.gen.py", "pkg/.gitignore", "pkg/a.py"]


def test_under_a_folder_and_pattern(tmp_path: Path) -> None:
    files = {"src/a.py": "", "src/b.txt": "", "src/deep/c.py": "", "tests/test_a.py": ""}
    ws = Workspace(make(tmp_path, files))
    assert ws.list_files("src") == ["src/a.py", "src/b.txt", "src/deep/c.py"]
    assert ws.list_files("src", "*.py") == ["src/a.py", "src/deep/c.py"]
    assert ws.list_files(pattern="test_*.py") == ["tests/test_a.py"]
    assert ws.list_files(pattern="**/*.py") == ["src/a.py", "src/deep/c.py", "tests/test_a.py"]
    assert ws.list_files(pattern="src/deep") == ["src/deep/c.py"]
    assert ws.list_files("src/a.py") == ["src/a.py"]


def test_listing_a_folder_outside_is_refused(tmp_path: Path) -> None:
    root = make(tmp_path / "p", {"a.py": ""})
    with pytest.raises(PathError, match="outside the project"):
        Workspace(root).list_files("..")
    with pytest.raises(PathError, match="does not exist"):
        Workspace(root).list_files("nope")


def test_links_out_of_the_tree_are_not_listed(tmp_path: Path) -> None:
    outside = make(tmp_path / "outside", {"secret.txt": "x"})
    root = make(tmp_path / "p", {"a.py": ""})
    (root / "out.txt").symlink_to(outside / "secret.txt")
    (root / "outdir").symlink_to(outside)
    assert Workspace(root).list_files() == ["a.py"]


def test_symlink_loops_are_not_listed(tmp_path: Path) -> None:
    root = make(tmp_path, {"a.py": ""})
    (root / "x").symlink_to(root / "y")
    (root / "y").symlink_to(root / "x")
    assert Workspace(root).list_files() == ["a.py"]


@pytest.mark.parametrize(
    ("rules", "path", "is_dir", "ignored"),
    [
        ("*.pyc", "a/b/c.pyc", False, True),
        ("/top.txt", "top.txt", False, True),
        ("/top.txt", "sub/top.txt", False, False),
        ("build/", "build", True, True),
        ("build/", "build", False, False),
        ("a/*.txt", "a/x.txt", False, True),
        ("a/*.txt", "a/b/x.txt", False, False),
        ("a/**/x.txt", "a/b/c/x.txt", False, True),
        ("*.log\n!keep.log", "keep.log", False, False),
        ("# comment\n\n", "comment", False, False),
        ("data[0-9].csv", "data7.csv", False, True),
        ("\\#hash", "#hash", False, True),
    ],
)
def test_gitignore_rules(tmp_path: Path, rules: str, path: str, is_dir: bool, ignored: bool) -> None:
    matcher = GitIgnore(tmp_path)
    matcher.rules.extend(parse_rules(rules))
    assert matcher.ignored(path, is_dir) is ignored
