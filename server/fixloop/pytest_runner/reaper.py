"""Runs the test command as a child and, when it ends or is stopped, kills every process it left behind.

Standalone (standard library only), run as `python -I -S reaper.py -- COMMAND...`. On Linux it makes
itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER), so the orphans of the command — daemons
started in a new session and double-forked ones included — are re-parented to it instead of to init,
and are found as its children: when the command exits, or on SIGTERM, every descendant is stopped
(SIGSTOP, so none can fork more) and killed. The exit status is the command's (a command killed by a
signal makes the reaper die of the same signal). SIGUSR1 is passed on (the report plugin dumps its
stacks on it), never fatal here.

With `--write DIR` (repeatable) the reaper first confines itself and so the command to writing under
those folders (plus /dev and /proc) with Landlock, where the kernel has it: tests can still read
anything the user can, but not create, change or delete files elsewhere. Without Landlock (an older
kernel, another system) it runs unconfined; FIXLOOP_NO_SANDBOX=1 turns the confinement off.
"""

from __future__ import annotations  # also loaded by zygote.py, in the project's interpreter (3.8+)

import ctypes
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable

PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
# Landlock (linux/landlock.h): the same syscall numbers on every architecture.
SYS_LANDLOCK_CREATE_RULESET, SYS_LANDLOCK_ADD_RULE, SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446
LANDLOCK_CREATE_RULESET_VERSION = 1
LANDLOCK_RULE_PATH_BENEATH = 1
# Every right that changes the file system: write, truncate, make and remove entries, move them (refer).
_WRITE_RIGHTS = {1: 0b1_1111_1111_0010, 2: 0b11_1111_1111_0010, 3: 0b111_1111_1111_0010}
ALWAYS_WRITABLE = ("/dev", "/proc")
NOT_FOUND = "fixloop-reaper: test command not found: "
NOT_EXECUTABLE = "fixloop-reaper: test command is not executable: "
SWEEP_SECONDS = 3.0

STOP_GRACE = 0.3  # seconds the command has to end on SIGTERM before it is killed


class _Stop(Exception):
    """SIGTERM, SIGINT or SIGHUP arrived: stop the command, then sweep."""


def _become_subreaper() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def confine_writes(folders: list[str]) -> bool:
    """Allow writing only under `folders` (and /dev, /proc) from now on, for this process and its children;
    False when the kernel cannot (no Landlock) or the user said not to."""
    if not folders or os.environ.get("FIXLOOP_NO_SANDBOX") or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        abi = libc.syscall(SYS_LANDLOCK_CREATE_RULESET, None, 0, LANDLOCK_CREATE_RULESET_VERSION)
        if abi < 1:
            return False
        rights = _WRITE_RIGHTS[min(abi, 3)]
        handled = ctypes.c_uint64(rights)
        ruleset = libc.syscall(SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(handled), ctypes.sizeof(handled), 0)
        if ruleset < 0:
            return False
        try:
            for folder in [*folders, *ALWAYS_WRITABLE]:
                try:
                    fd = os.open(folder, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
                except OSError:
                    continue
                try:
                    rule = _PathBeneath(rights, fd)
                    if (
                        libc.syscall(
                            SYS_LANDLOCK_ADD_RULE, ruleset, LANDLOCK_RULE_PATH_BENEATH, ctypes.byref(rule), 0
                        )
                        != 0
                    ):
                        return False
                finally:
                    os.close(fd)
            if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
                return False
            return libc.syscall(SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0) == 0
        finally:
            os.close(ruleset)
    except (OSError, AttributeError):
        return False


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process we can see (Linux /proc)."""
    table: dict[int, int] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return table
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as file:
                stat = file.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1:
            table[int(entry)] = int(fields[1])
    return table


def _descendants(root: int) -> list[int]:
    parents = _parents()
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    found: list[int] = []
    queue = list(children.get(root, []))
    while queue:
        pid = queue.pop()
        found.append(pid)
        queue.extend(children.get(pid, []))
    return found


def _signal_all(pids: list[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            pass


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def sweep() -> None:
    """Stop, then kill, every descendant; repeat until none is left (or the time is up)."""
    deadline = time.monotonic() + SWEEP_SECONDS
    while time.monotonic() < deadline:
        pids = _descendants(os.getpid())
        if not pids:
            return
        _signal_all(pids, signal.SIGSTOP)
        _signal_all(pids, signal.SIGKILL)
        time.sleep(0.01)
        _reap()


def _on_stop(signum: int, frame: object) -> None:
    raise _Stop()


def _wait_for(child: int) -> int | None:
    """The wait status of the command (pid `child`), reaping adopted orphans meanwhile; on a stop signal,
    SIGTERM the command and SIGKILL it after a short grace."""
    kill_at = None
    while True:
        try:
            if kill_at is None:
                pid, raw = os.waitpid(-1, 0)
            else:
                pid, raw = os.waitpid(-1, os.WNOHANG)
                if pid == 0:
                    if time.monotonic() > kill_at:
                        _signal_all([child], signal.SIGKILL)
                    time.sleep(0.02)
                    continue
        except _Stop:
            _signal_all([child], signal.SIGTERM)
            kill_at = time.monotonic() + STOP_GRACE
            continue
        except ChildProcessError:
            return None
        if pid == child:
            return raw


STOPS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def guard(start: Callable[[], int]) -> int | None:
    """Run the command `start()` starts (it returns the pid) as this process's child, as its subreaper: when
    it ends, or on a stop signal, every descendant is swept. Its wait status (None: stopped before it ended
    on its own, or not waited for); SIGUSR1 is never fatal here. `start` may raise: nothing runs then."""
    _become_subreaper()
    for sig in STOPS:
        signal.signal(sig, _on_stop)
    signal.signal(signal.SIGUSR1, lambda signum, frame: None)
    child = start()
    try:
        status = _wait_for(child)
    except _Stop:
        status = None
    for sig in STOPS:
        signal.signal(sig, signal.SIG_IGN)  # the sweep must finish
    sweep()
    return status


def exit_code(status: int | None) -> int:
    """The exit code that passes the command's status on; a command killed by a signal makes this process
    die of the same signal first."""
    if status is None:
        return 1
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1


def main(argv: list[str]) -> int:
    split = argv.index("--") if "--" in argv else -1
    options, command = argv[: max(split, 0)], argv[split + 1 :]
    writable = [options[i + 1] for i, option in enumerate(options[:-1]) if option == "--write"]
    confine_writes(writable)
    try:
        status = guard(lambda: subprocess.Popen(command).pid)
    except FileNotFoundError:
        print(NOT_FOUND + command[0], file=sys.stderr, flush=True)
        return 127
    except PermissionError:
        print(NOT_EXECUTABLE + command[0], file=sys.stderr, flush=True)
        return 126
    return exit_code(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
