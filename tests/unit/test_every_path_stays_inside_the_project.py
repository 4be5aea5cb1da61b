"""Workspace.resolve keeps every path inside the project and away from VCS internals and secrets."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fixloop.errors import PathError
from fixloop.tools.workspace import Workspace


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("x = 1\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_app.py").write_text("def test_x():\n    assert True\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    return root


def test_relative_path_resolves_inside(project: Path) -> None:
    ws = Workspace(project)
    assert ws.resolve("src/app.py") == project.resolve() / "src" / "app.py"
    assert ws.resolve("./src/../src/app.py", must_exist=True) == project.resolve() / "src" / "app.py"


def test_root_is_resolved(project: Path) -> None:
    ws = Workspace(project / "src" / "..")
    assert ws.root == project.resolve()
    assert ws.resolve("") == ws.root
    assert ws.resolve(".") == ws.root


@pytest.mark.parametrize("path", ["../outside.py", "src/../../outside.py", "../project/../x", "~/x", "~"])
def test_dotdot_and_home_escapes_are_rejected(project: Path, path: str) -> None:
    with pytest.raises(PathError, match="outside the project; use a path relative to the project root"):
        Workspace(project).resolve(path)


def test_absolute_path_outside_is_rejected(project: Path) -> None:
    with pytest.raises(PathError, match=r"'/etc/passwd' is outside the project.*e\.g\. 'src/app\.py'"):
        Workspace(project).resolve("/etc/passwd")


def test_absolute_path_inside_is_fine(project: Path) -> None:
    ws = Workspace(project)
    assert ws.resolve(str(project / "src" / "app.py"), must_exist=True) == ws.root / "src" / "app.py"


def test_absolute_path_through_unresolved_root_alias(tmp_path: Path, project: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(project)
    ws = Workspace(alias)
    assert ws.resolve(str(alias / "src" / "app.py"), must_exist=True) == project.resolve() / "src" / "app.py"
    assert ws.relative(alias / "src" / "app.py") == "src/app.py"


def test_sibling_with_common_prefix_is_outside(tmp_path: Path, project: Path) -> None:
    sibling = tmp_path / "project2"
    sibling.mkdir()
    with pytest.raises(PathError, match="outside the project"):
        Workspace(project).resolve(str(sibling / "x.py"))


def test_symlink_leaving_the_root_is_rejected(tmp_path: Path, project: Path) -> None:
    secret = tmp_path / "elsewhere.txt"
    secret.write_text("private")
    (project / "link.txt").symlink_to(secret)
    (project / "linkdir").symlink_to(tmp_path)
    ws = Workspace(project)
    with pytest.raises(PathError, match="link that leads outside the project"):
        ws.resolve("link.txt")
    with pytest.raises(PathError, match="link that leads outside the project"):
        ws.resolve("linkdir/elsewhere.txt")


def test_symlink_inside_the_root_is_fine(project: Path) -> None:
    (project / "alias.py").symlink_to(project / "src" / "app.py")
    assert Workspace(project).resolve("alias.py") == project.resolve() / "src" / "app.py"


def test_symlink_into_git_is_rejected(project: Path) -> None:
    (project / "cfg").symlink_to(project / ".git" / "config")
    with pytest.raises(PathError, match=r"\.git"):
        Workspace(project).resolve("cfg")


@pytest.mark.parametrize("path", [".git", ".git/config", ".git/hooks/pre-commit", "sub/.git/HEAD"])
def test_git_internals_are_off_limits(project: Path, path: str) -> None:
    with pytest.raises(PathError, match="off limits"):
        Workspace(project).resolve(path)


@pytest.mark.parametrize(
    "path",
    [
        ".env",
        ".env.local",
        "config/.env.production",
        "server.pem",
        "tls/private.key",
        "id_rsa",
        "id_rsa.pub",
        "home/id_ed25519",
        ".netrc",
        ".pypirc",
        ".npmrc",
        "credentials.json",
        "aws/credentials",
        "cert.p12",
        "secrets.yaml",
        "secrets.toml",
        ".ssh/config",
        "ID_RSA",
    ],
)
def test_secrets_are_off_limits(project: Path, path: str) -> None:
    with pytest.raises(PathError, match="off limits"):
        Workspace(project).resolve(path)


@pytest.mark.parametrize(
    "path",
    [
        ".gitignore",
        ".github/workflows/ci.yml",
        "src/environment.py",
        "keys.py",
        "docs/secret_handshake.md",
        "envs/dev.toml",
    ],
)
def test_ordinary_names_that_look_close_are_allowed(project: Path, path: str) -> None:
    assert Workspace(project).resolve(path) == project.resolve() / path


def test_symlink_loop_is_rejected(project: Path) -> None:
    (project / "a").symlink_to(project / "b")
    (project / "b").symlink_to(project / "a")
    with pytest.raises(PathError, match="symlink loop"):
        Workspace(project).resolve("a/x.py")


def test_nul_byte_is_rejected(project: Path) -> None:
    with pytest.raises(PathError, match="NUL byte"):
        Workspace(project).resolve("src/app.py\x00.txt")


def test_non_string_path_is_rejected(project: Path) -> None:
    with pytest.raises(PathError, match="must be a string"):
        Workspace(project).resolve(42)  # type: ignore[arg-type]


@pytest.mark.parametrize("path", ["", "  ", "."])
def test_empty_path_where_a_file_is_needed(project: Path, path: str) -> None:
    with pytest.raises(PathError, match="path is empty; give a file path"):
        Workspace(project).resolve_file(path)


def test_folder_where_a_file_is_needed(project: Path) -> None:
    with pytest.raises(PathError, match="'src' is a folder, not a file; use list_files"):
        Workspace(project).resolve_file("src")


def test_missing_file_suggests_the_nearest(project: Path) -> None:
    ws = Workspace(project)
    with pytest.raises(PathError, match=r"'app.py' does not exist; did you mean 'src/app.py'\?"):
        ws.resolve("app.py", must_exist=True)
    with pytest.raises(PathError, match=r"'nothing/like/this\.rs' does not exist; use list_files"):
        ws.resolve("nothing/like/this.rs", must_exist=True)


def test_missing_is_fine_unless_required(project: Path) -> None:
    assert Workspace(project).resolve("src/new.py") == project.resolve() / "src" / "new.py"


def test_windows_separators_and_file_uri(project: Path) -> None:
    ws = Workspace(project)
    assert ws.resolve("src\\app.py") == ws.root / "src" / "app.py"
    assert ws.resolve(f"file://{project / 'src' / 'app.py'}") == ws.root / "src" / "app.py"
    assert ws.resolve(f"file://{project / 'src'}/my%20app.py") == ws.root / "src" / "my app.py"


def test_relative_uses_forward_slashes(project: Path) -> None:
    ws = Workspace(project)
    assert ws.relative(ws.root / "src" / "app.py") == "src/app.py"
    assert ws.relative(Path("src") / "app.py") == "src/app.py"
    assert ws.relative(ws.root) == "."
    with pytest.raises(PathError):
        ws.relative(Path(os.sep) / "etc" / "passwd")


@pytest.mark.parametrize(
    ("rel", "expected"),
    [
        ("tests/test_app.py", True),
        ("tests/helpers.py", True),
        ("pkg/tests/data/x.json", True),
        ("test_app.py", True),
        ("src/app_test.py", True),
        ("conftest.py", True),
        ("src/conftest.py", True),
        ("src/app.py", False),
        ("src/testing_utils.py", False),
        ("src/contest.py", False),
        ("tests", False),
    ],
)
def test_is_test_file(project: Path, rel: str, expected: bool) -> None:
    assert Workspace(project).is_test_file(rel) is expected
