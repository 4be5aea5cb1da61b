"""Process helpers: is a recorded owner still alive (shadow cleanup, model download); kill what a test run
left behind, found by the mark in its environment."""

from __future__ import annotations

import os
import signal

from fixloop.platform_support import CURRENT, windows_process_alive


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists (a permission error means it does, owned by someone else)."""
    if pid <= 0:
        return False
    if CURRENT.windows:  # signal 0 is no probe there: os.kill terminates the process
        return windows_process_alive(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


RUN_MARK_ENV = "FIXLOOP_RUN_MARK"  # set in every test process's environment, unique per test run


def kill_marked(mark: str) -> list[int]:
    """SIGKILL every process of ours whose environment carries `RUN_MARK_ENV=mark` (Linux /proc; a no-op
    elsewhere): the backstop for processes that escaped the reaper, e.g. after a test killed it."""
    needle = f"{RUN_MARK_ENV}={mark}".encode()
    killed: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return killed
    own = os.getuid()
    for entry in entries:
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid != own:
                continue
            with open(f"/proc/{entry}/environ", "rb") as file:
                environ = file.read()
        except OSError:
            continue
        if needle in environ.split(b"\0"):
            try:
                os.kill(int(entry), signal.SIGKILL)
                killed.append(int(entry))
            except OSError:
                pass
    return killed
