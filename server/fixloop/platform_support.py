"""What each operating system gives fixloop: how a test process tree starts and ends, where a virtual
environment keeps its interpreter, how a path names another drive, and which protections run there."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CREATE_NEW_PROCESS_GROUP = 0x00000200  # subprocess.CREATE_NEW_PROCESS_GROUP, defined on Windows only
TASKKILL_TIMEOUT = 10.0
_DRIVE = re.compile(r"[A-Za-z]:")


@dataclass(frozen=True)
class Protections:
    """What guards a test run on one system (README, "Systems")."""

    write_sandbox: bool  # Landlock confines the tests' writes to the scratch copy
    stray_reaper: bool  # a child subreaper finds and kills daemons the tests left behind
    process_tree: str  # how a test run is ended as a whole

    def missing(self) -> list[str]:
        gaps = []
        if not self.write_sandbox:
            gaps.append("no write sandbox (tests may write outside the scratch copy; Landlock is Linux-only)")
        if not self.stray_reaper:
            gaps.append("no stray-process reaper (a daemon a test starts outside its tree may outlive it)")
        return gaps


@dataclass(frozen=True)
class Platform:
    """One operating system, as sys.platform names it ("linux", "darwin", "win32"); tests pass others."""

    system: str

    @staticmethod
    def current() -> Platform:
        return Platform("win32" if os.name == "nt" else sys.platform)

    @property
    def windows(self) -> bool:
        return self.system == "win32"

    @property
    def linux(self) -> bool:
        return self.system.startswith("linux")

    @property
    def name(self) -> str:
        names = {"win32": "Windows", "darwin": "macOS"}
        return names.get(self.system, "Linux" if self.linux else self.system)

    def venv_python(self, venv: Path) -> Path:
        """The interpreter of the virtual environment in `venv` (`.venv\\Scripts\\python.exe` on Windows)."""
        return venv / ("Scripts/python.exe" if self.windows else "bin/python")

    def new_group(self) -> dict[str, Any]:
        """Popen options that start a process as the head of its own tree, so it ends as one."""
        return {"creationflags": CREATE_NEW_PROCESS_GROUP} if self.windows else {"start_new_session": True}

    def kill_tree_command(self, pid: int) -> list[str] | None:
        """The command that ends `pid` and every process under it, where signals to a group cannot."""
        return ["taskkill", "/T", "/F", "/PID", str(pid)] if self.windows else None

    def protections(self) -> Protections:
        tree = "taskkill /T /F" if self.windows else "its process group (SIGTERM, then SIGKILL)"
        return Protections(write_sandbox=self.linux, stray_reaper=self.linux, process_tree=tree)

    def protections_notice(self) -> str | None:
        """The one line that says which protections this system lacks; None where all run."""
        missing = self.protections().missing()
        if not missing:
            return None
        ended = self.protections().process_tree
        return f"on {self.name} fixloop runs tests with {'; '.join(missing)}; a test run is ended via {ended}"


CURRENT = Platform.current()


def signal_tree(pid: int, name: str, platform: Platform = CURRENT) -> bool:
    """Send the signal called `name` ("SIGTERM", "SIGKILL", "SIGUSR1") to the tree headed by `pid`; False
    when it is gone or this system has no such signal. On Windows SIGTERM and SIGKILL end the tree with
    taskkill (no POSIX signals there) and the others are not sent."""
    if platform.windows:
        command = platform.kill_tree_command(pid)
        if name not in ("SIGTERM", "SIGKILL") or command is None:
            return False
        try:
            done = subprocess.run(command, capture_output=True, timeout=TASKKILL_TIMEOUT, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return False
        return done.returncode == 0
    sig = getattr(signal, name, None)
    if sig is None:
        return False
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


STILL_ACTIVE = 259  # GetExitCodeProcess's answer for a running process
PROCESS_QUERY_LIMITED_INFORMATION = 0x1000


def windows_process_alive(pid: int) -> bool:
    """Whether `pid` runs, asked of Windows itself: there os.kill(pid, 0) would terminate the process."""
    import ctypes  # Windows only: kernel32

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)  # type: ignore[attr-defined]
    handle = kernel32.OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, False, pid)
    if not handle:
        return ctypes.get_last_error() == 5  # ERROR_ACCESS_DENIED: it exists, owned by someone else
    try:
        code = ctypes.c_ulong()
        return bool(kernel32.GetExitCodeProcess(handle, ctypes.byref(code))) and code.value == STILL_ACTIVE
    finally:
        kernel32.CloseHandle(handle)


def drive_form(path: str) -> str | None:
    """How a Windows path names a place outside any relative tree: "unc" (\\\\server\\share), "drive-relative"
    (C:foo, relative to that drive's current folder), "drive" (C:\\…), or None for anything else."""
    text = path.replace("\\", "/")
    if text.startswith("//"):
        return "unc"
    if _DRIVE.match(text):
        return "drive" if text[2:3] == "/" else "drive-relative"
    return None
