"""Per-system facts (fixloop/platform_support.py), with the system passed in: Windows ends a test run's tree
with taskkill /T and has no POSIX signals, keeps a venv's python in Scripts\\python.exe, and only there a
drive letter may name a path; one notice names the protections macOS and Windows lack. The POSIX tree
kill runs for real here."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from fixloop.errors import PathError
from fixloop.interpreter import choose_interpreter
from fixloop.platform_support import Platform, drive_form, signal_tree
from fixloop.tools.workspace import Workspace

LINUX, MACOS, WINDOWS = Platform("linux"), Platform("darwin"), Platform("win32")


def test_windows_ends_a_tree_with_taskkill_and_posix_with_the_process_group():
    assert WINDOWS.kill_tree_command(42) == ["taskkill", "/T", "/F", "/PID", "42"]
    assert WINDOWS.new_group() == {"creationflags": 0x200}  # CREATE_NEW_PROCESS_GROUP
    for posix in (LINUX, MACOS):
        assert posix.kill_tree_command(42) is None
        assert posix.new_group() == {"start_new_session": True}


def test_windows_sends_no_posix_signal():
    assert signal_tree(os.getpid(), "SIGUSR1", WINDOWS) is False  # the stack dump is POSIX-only
    assert signal_tree(os.getpid(), "SIGHUP", WINDOWS) is False


def ended(pid: int) -> bool:
    """Gone, or a zombie waiting for its new parent (what `ps` says, on Linux and macOS)."""
    done = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True)
    return done.returncode != 0 or done.stdout.strip().startswith("Z")


@pytest.mark.skipif(os.name == "nt", reason="POSIX process groups")
def test_a_posix_tree_ends_with_its_group_grandchildren_included():
    script = "sleep 60 & echo $!; wait"
    shell = subprocess.Popen(["sh", "-c", script], stdout=subprocess.PIPE, **LINUX.new_group())
    assert shell.stdout is not None
    grandchild = int(shell.stdout.readline())
    assert signal_tree(shell.pid, "SIGKILL", LINUX)
    shell.wait(10)
    deadline = time.monotonic() + 5
    while not ended(grandchild) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert ended(grandchild)


def test_one_notice_names_what_macos_and_windows_lack():
    assert LINUX.protections_notice() is None
    for system, ended in ((MACOS, "process group"), (WINDOWS, "taskkill /T /F")):
        notice = system.protections_notice()
        assert notice is not None and system.name in notice
        assert "no write sandbox" in notice and "no stray-process reaper" in notice and ended in notice


@pytest.mark.parametrize(
    ("path", "form"),
    [
        ("C:\\Windows\\win.ini", "drive"),
        ("c:/Windows", "drive"),
        ("C:foo", "drive-relative"),
        ("\\\\server\\share\\x", "unc"),
        ("//server/share", "unc"),
        ("\\\\?\\C:\\x", "unc"),
        ("src\\app.py", None),
        ("src/app.py", None),
        ("calc:odd.py", None),
    ],
)
def test_drive_letters_and_shares_are_recognised(path: str, form: str | None):
    assert drive_form(path) == form


@pytest.mark.parametrize("system", [LINUX, MACOS, WINDOWS], ids=lambda s: s.system)
@pytest.mark.parametrize("path", ["C:foo", "c:src\\app.py", "\\\\server\\share\\app.py", "//server/share"])
def test_drive_relative_paths_and_shares_are_refused_on_every_system(tmp_path: Path, system, path: str):
    with pytest.raises(PathError, match="another drive or a network share"):
        Workspace(tmp_path, system).resolve(path)


@pytest.mark.parametrize("system", [LINUX, MACOS], ids=lambda s: s.system)
def test_a_drive_path_is_refused_where_there_are_no_drives(tmp_path: Path, system):
    with pytest.raises(PathError):
        Workspace(tmp_path, system).resolve("C:\\Windows\\win.ini")


def test_backslashes_are_separators_so_they_cannot_hide_an_escape(tmp_path: Path):
    (tmp_path / "src").mkdir()
    workspace = Workspace(tmp_path / "src")
    assert workspace.resolve("pkg\\app.py") == (tmp_path / "src" / "pkg" / "app.py").resolve()
    for path in ("..\\secret.txt", "pkg/..\\..\\secret.txt", "pkg\\../../secret.txt"):
        with pytest.raises(PathError, match="outside the project"):
            workspace.resolve(path)


def test_a_windows_venv_is_found_as_the_project_interpreter(tmp_path: Path):
    venv = tmp_path / ".venv"
    (venv / "Scripts").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = C:\\Python312\n")
    (venv / "Scripts" / "python.exe").write_bytes(b"MZ")
    assert WINDOWS.venv_python(venv) == venv / "Scripts" / "python.exe"
    chosen = choose_interpreter(tmp_path, platform=WINDOWS, env={})
    assert (
        chosen.python is not None and chosen.python.resolve() == (venv / "Scripts" / "python.exe").resolve()
    )
    assert "the project's .venv" in chosen.reason
    assert "the project's .venv" not in choose_interpreter(tmp_path, platform=LINUX, env={}).reason
