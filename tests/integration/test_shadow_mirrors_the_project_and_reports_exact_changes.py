"""The shadow mirrors the user's project, reports exact changes, and never touches the user's repo."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fixloop.errors import FixloopError, ShadowError
from fixloop.result import FileChange
from fixloop.shadow import ShadowWorkspace, apply_changes, clean_stale_shadows, shadows_dir
from fixloop.shadow.lifetime import new_container
from support import repo_snapshot

GIT_ENV = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}


def git(repo: Path, *args: str) -> str:
    command = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", *args]
    return subprocess.run(command, cwd=repo, check=True, capture_output=True, text=True, env=GIT_ENV).stdout


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())


@pytest.fixture(autouse=True)
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(
        root,
        {
            ".gitignore": "*.log\nbuild/\n",
            "src/calc.py": "def add(a, b):\n    return a - b\n",
            "src/keep.py": "VALUE = 1\n",
            "src/gone.py": "OLD = True\n",
            "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
            "docs/crlf.txt": "one\r\ntwo\r\n",
        },
    )
    git(root, "add", ".")
    git(root, "commit", "-qm", "initial")
    # The user's uncommitted state: a staged edit, an unstaged edit, a deletion, untracked and ignored files.
    write(root, {"src/keep.py": "VALUE = 2\n", "notes/todo.md": "untracked\n", "debug.log": "ignored\n"})
    write(root, {"env/pyvenv.cfg": "home = /usr\n", "env/lib/x.py": "#\n", "node_modules/m.js": "//\n"})
    git(root, "add", "src/keep.py")
    write(root, {"src/keep.py": "VALUE = 3\n"})
    (root / "src/gone.py").unlink()
    git(root, "stash", "list")
    return root


def test_git_shadow_mirrors_the_working_tree_not_just_head(repo: Path) -> None:
    unsaved = {"src/calc.py": "def add(a, b):\n    return a + b  # unsaved\n"}
    with ShadowWorkspace.create(repo, unsaved) as shadow:
        assert shadow.is_git
        assert shadow.original == repo.resolve()
        assert not shadow.root.is_relative_to(repo)
        assert (shadow.root / "src/keep.py").read_text() == "VALUE = 3\n"
        assert (shadow.root / "notes/todo.md").read_text() == "untracked\n"
        assert not (shadow.root / "src/gone.py").exists()
        assert not (shadow.root / "debug.log").exists()
        assert not (shadow.root / "env").exists()  # an un-ignored virtualenv is not copied
        assert not (shadow.root / "node_modules").exists()
        assert "unsaved" in (shadow.root / "src/calc.py").read_text()
        assert (shadow.root / "docs/crlf.txt").read_bytes() == b"one\r\ntwo\r\n"
        assert shadow.changes() == []  # the user's state is the baseline, overlays included


def test_changes_are_exact_sorted_and_ignore_caches(repo: Path) -> None:
    with ShadowWorkspace.create(repo) as shadow:
        write(shadow.root, {"src/calc.py": "def add(a, b):\n    return a + b\n"})
        write(shadow.root, {"src/new_helper.py": "X = 1\n", "docs/crlf.txt": "one\r\n2\r\n"})
        write(shadow.root, {"src/__pycache__/calc.cpython-311.pyc": "junk", ".pytest_cache/v": "x"})
        write(shadow.root, {"trace.log": "ignored by .gitignore\n", "build/out.txt": "ignored\n"})
        (shadow.root / "src/keep.py").unlink()
        changes = shadow.changes()
    assert [change.path for change in changes] == [
        "docs/crlf.txt",
        "src/calc.py",
        "src/keep.py",
        "src/new_helper.py",
    ]
    by_path = {change.path: change for change in changes}
    assert by_path["src/calc.py"].old_text == "def add(a, b):\n    return a - b\n"
    assert by_path["src/keep.py"] == FileChange("src/keep.py", "VALUE = 3\n", None)
    assert by_path["src/new_helper.py"] == FileChange("src/new_helper.py", None, "X = 1\n")
    assert by_path["docs/crlf.txt"].new_text == "one\r\n2\r\n"


def test_unified_diff_is_accepted_by_git_apply(repo: Path, tmp_path: Path) -> None:
    with ShadowWorkspace.create(repo) as shadow:
        write(shadow.root, {"src/calc.py": "def add(a, b):\n    return a + b"})  # no final newline
        write(shadow.root, {"src/new.py": "N = 'é😀'\n", "empty.txt": "", "docs/crlf.txt": "uno\r\ntwo\r\n"})
        (shadow.root / "src/keep.py").unlink()
        diff = shadow.unified_diff()
        expected = {change.path: change.new_text for change in shadow.changes()}
    assert "--- a/src/calc.py\n+++ b/src/calc.py\n" in diff
    assert "--- /dev/null\n+++ b/src/new.py\n" in diff
    assert "\\ No newline at end of file\n" in diff
    patch = tmp_path / "fix.diff"
    patch.write_bytes(diff.encode())
    subprocess.run(["git", "apply", "--check", str(patch)], cwd=repo, check=True, env=GIT_ENV)
    subprocess.run(["git", "apply", str(patch)], cwd=repo, check=True, env=GIT_ENV)
    for rel, text in expected.items():
        if text is None:
            assert not (repo / rel).exists()
        else:
            assert (repo / rel).read_bytes() == text.encode()


def test_user_repo_is_byte_for_byte_unchanged_after_success(repo: Path) -> None:
    before = repo_snapshot(repo)
    with ShadowWorkspace.create(repo, {"src/calc.py": "x = 1\n"}) as shadow:
        write(shadow.root, {"src/calc.py": "def add(a, b):\n    return a + b\n", "new.py": "\n"})
        shadow.changes()
        shadow.unified_diff()
        subprocess.run(["git", "status"], cwd=shadow.root, check=True, capture_output=True)
        container = shadow.root.parent
    assert not container.exists()
    assert repo_snapshot(repo) == before


def test_user_repo_is_unchanged_after_an_exception(repo: Path) -> None:
    before = repo_snapshot(repo)
    with pytest.raises(RuntimeError), ShadowWorkspace.create(repo) as shadow:
        write(shadow.root, {"src/calc.py": "broken(\n"})
        raise RuntimeError("the agent crashed")
    assert not shadow.root.exists()
    assert list(shadows_dir().iterdir()) == []
    assert repo_snapshot(repo) == before


def test_close_is_idempotent_and_changes_after_close_is_an_error(repo: Path) -> None:
    shadow = ShadowWorkspace.create(repo, run_id="r1")
    assert shadow.root.parent.name.startswith("r1-")
    shadow.close()
    shadow.close()
    with pytest.raises(ShadowError):
        shadow.changes()


def test_project_in_a_subfolder_of_a_repository(repo: Path) -> None:
    write(repo, {"pkg/sub/mod.py": "A = 1\n"})
    git(repo, "add", "pkg")
    git(repo, "commit", "-qm", "pkg")
    with ShadowWorkspace.create(repo / "pkg", {"sub/mod.py": "A = 2\n"}) as shadow:
        assert shadow.root.name == "pkg"
        assert (shadow.root / "sub/mod.py").read_text() == "A = 2\n"
        write(shadow.root, {"sub/mod.py": "A = 3\n"})
        assert shadow.changes() == [FileChange("sub/mod.py", "A = 2\n", "A = 3\n")]


def test_repository_without_commits(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q")
    write(root, {"a.py": "A = 1\n"})
    with ShadowWorkspace.create(root) as shadow:
        assert shadow.is_git
        write(shadow.root, {"a.py": "A = 2\n"})
        assert shadow.changes() == [FileChange("a.py", "A = 1\n", "A = 2\n")]


def test_plain_folder_is_copied_without_venvs_and_caches(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    write(
        root,
        {
            "mod.py": "X = 1\n",
            "tests/test_mod.py": "def test_x():\n    pass\n",
            ".venv/lib/big.py": "#\n",
            "env2/pyvenv.cfg": "home = /usr\n",
            "node_modules/x.js": "//\n",
            "__pycache__/mod.pyc": "junk",
        },
    )
    before = {path: path.read_bytes() for path in root.rglob("*") if path.is_file()}
    with ShadowWorkspace.create(root, {"mod.py": "X = 2\n"}) as shadow:
        assert not shadow.is_git
        assert (shadow.root / "tests/test_mod.py").exists()
        assert not (shadow.root / ".venv").exists()
        assert not (shadow.root / "env2").exists()
        assert not (shadow.root / "node_modules").exists()
        assert not (shadow.root / "__pycache__").exists()
        assert shadow.changes() == []
        write(shadow.root, {"mod.py": "X = 3\n", "new.py": "N = 1\n", "__pycache__/n.pyc": "j"})
        (shadow.root / "tests/test_mod.py").unlink()
        assert shadow.changes() == [
            FileChange("mod.py", "X = 2\n", "X = 3\n"),
            FileChange("new.py", None, "N = 1\n"),
            FileChange("tests/test_mod.py", "def test_x():\n    pass\n", None),
        ]
    assert {path: path.read_bytes() for path in root.rglob("*") if path.is_file()} == before


def test_plain_folder_over_the_size_cap_is_refused_clearly(tmp_path: Path) -> None:
    root = tmp_path / "big"
    write(root, {"data.bin": "x" * 4096})
    with pytest.raises(ShadowError, match=r"over the 0 MiB limit.*git"):
        ShadowWorkspace.create(root, max_copy_bytes=1024)
    assert list(shadows_dir().iterdir()) == []


def test_overlay_paths_must_stay_inside_the_project(repo: Path) -> None:
    with pytest.raises(ShadowError, match="relative path inside the project"):
        ShadowWorkspace.create(repo, {"../escape.py": "x"})
    assert list(shadows_dir().iterdir()) == []


def test_a_killed_run_leaves_the_repo_unchanged_and_is_cleaned_next_time(repo: Path) -> None:
    before = repo_snapshot(repo)
    script = textwrap.dedent(
        f"""
        import os, signal, sys
        from pathlib import Path
        from fixloop.shadow import ShadowWorkspace
        shadow = ShadowWorkspace.create(Path({str(repo)!r}), {{"src/calc.py": "edited\\n"}}, run_id="killed")
        (shadow.root / "src/calc.py").write_text("mid-edit\\n")
        print(shadow.root, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=os.environ)
    assert done.returncode == -signal.SIGKILL, done.stderr
    left_behind = Path(done.stdout.strip())
    assert left_behind.exists()
    assert repo_snapshot(repo) == before
    with ShadowWorkspace.create(repo) as live:  # a live shadow of this process is never "stale"
        assert clean_stale_shadows() == 1
        assert live.root.exists()
    assert not left_behind.exists()
    assert clean_stale_shadows() == 0
    assert repo_snapshot(repo) == before


def test_a_shadow_still_being_set_up_is_not_taken_for_a_stale_one(repo: Path) -> None:
    # Two fixes start together: the second run's cleanup runs while the first is still cloning.
    half_made = new_container("first-run", repo)
    assert clean_stale_shadows() == 0
    assert half_made.is_dir()
    with ShadowWorkspace.create(repo):
        pass
    assert half_made.is_dir()


def test_apply_changes_writes_the_fix_and_refuses_stale_files(repo: Path) -> None:
    with ShadowWorkspace.create(repo) as shadow:
        write(shadow.root, {"src/calc.py": "def add(a, b):\n    return a + b\n", "src/extra.py": "E = 1\n"})
        (shadow.root / "notes/todo.md").unlink()
        changes = shadow.changes()
    apply_changes(repo, changes)
    assert (repo / "src/calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert (repo / "src/extra.py").read_text() == "E = 1\n"
    assert not (repo / "notes/todo.md").exists()

    stale = [
        FileChange("src/calc.py", "something else\n", "new\n"),
        FileChange("src/keep.py", "VALUE = 3\n", ""),
    ]
    with pytest.raises(FixloopError, match=r"src/calc.py was edited since the fix was made"):
        apply_changes(repo, stale)
    assert (repo / "src/keep.py").read_text() == "VALUE = 3\n"  # nothing was written
    with pytest.raises(FixloopError, match=r"src/extra\.py now exists"):
        apply_changes(repo, [FileChange("src/extra.py", None, "again\n")])
