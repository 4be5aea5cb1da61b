"""Runs the test command as a child and, when it ends or is stopped, kills every process it left behind.

Standalone (standard library only), run as `python -I -S reaper.py -- COMMAND...`. On Linux it makes
itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER), so the orphans of the command — daemons
started in a new session and double-forked ones included — are re-parented to it instead of to init,
and are found as its children: when the command exits, or on SIGTERM, every descendant is stopped
(SIGSTOP, so none can fork more) and killed. The exit status is the command's (a command killed by a
signal makes the reaper die of the same signal). SIGUSR1 is passed on (the report plugin dumps its
stacks on it), never fatal here.
"""

import ctypes
import os
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36
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


def _wait_for(child: subprocess.Popen) -> int | None:
    """The command's wait status, reaping adopted orphans meanwhile; on a stop signal, SIGTERM the command
    and SIGKILL it after a short grace."""
    kill_at = None
    while True:
        try:
            if kill_at is None:
                pid, raw = os.waitpid(-1, 0)
            else:
                pid, raw = os.waitpid(-1, os.WNOHANG)
                if pid == 0:
                    if time.monotonic() > kill_at:
                        _signal_all([child.pid], signal.SIGKILL)
                    time.sleep(0.02)
                    continue
        except _Stop:
            _signal_all([child.pid], signal.SIGTERM)
            kill_at = time.monotonic() + STOP_GRACE
            continue
        except ChildProcessError:
            return None
        if pid == child.pid:
            return raw


def main(argv: list[str]) -> int:
    command = argv[argv.index("--") + 1 :] if "--" in argv else argv
    _become_subreaper()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, _on_stop)
    signal.signal(signal.SIGUSR1, lambda signum, frame: None)
    try:
        child = subprocess.Popen(command)
    except FileNotFoundError:
        print(NOT_FOUND + command[0], file=sys.stderr, flush=True)
        return 127
    except PermissionError:
        print(NOT_EXECUTABLE + command[0], file=sys.stderr, flush=True)
        return 126
    try:
        status = _wait_for(child)
    except _Stop:
        status = None
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)  # the sweep must finish
    sweep()
    if status is None:
        return 1
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
