"""The bench's subprocesses (setup commands, the judge's pytest): own process group, a deadline."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

OUTPUT_CAP = 64 * 1024  # the tail of the output that is kept
KILL_GRACE = 2.0


@dataclass(frozen=True)
class Finished:
    """How a subprocess ended: exit code (None when killed at the deadline) and the tail of its output."""

    exit_code: int | None
    output: str
    timed_out: bool
    seconds: float


async def run_process(
    argv: Sequence[str] | str, *, cwd: Path, env: Mapping[str, str], limit: float
) -> Finished:
    """Run `argv` (a shell command when a string) in its own session; past `limit` s the group is killed.

    Raises OSError when the program cannot be started.
    """
    loop = asyncio.get_running_loop()
    started = loop.time()
    proc = await _spawn(argv, cwd, env)
    tail = bytearray()

    async def drain() -> None:
        assert proc.stdout is not None
        while chunk := await proc.stdout.read(65536):
            tail.extend(chunk)
            del tail[:-OUTPUT_CAP]

    reader = asyncio.create_task(drain())
    timed_out = False
    try:
        try:
            async with asyncio.timeout(limit):
                await proc.wait()
        except TimeoutError:
            timed_out = True
        await kill_group(proc)
        with contextlib.suppress(TimeoutError):  # a grandchild that left the group may hold the pipe
            async with asyncio.timeout(KILL_GRACE):
                await asyncio.shield(reader)
    except asyncio.CancelledError:
        await asyncio.shield(kill_group(proc))
        raise
    finally:
        reader.cancel()
    text = tail.decode("utf-8", "replace")
    return Finished(None if timed_out else proc.returncode, text, timed_out, loop.time() - started)


async def _spawn(argv: Sequence[str] | str, cwd: Path, env: Mapping[str, str]) -> asyncio.subprocess.Process:
    """`argv` started in a session of its own, its output (both streams) on one pipe."""
    common = {
        "cwd": cwd,
        "env": dict(env),
        "stdin": asyncio.subprocess.DEVNULL,
        "stdout": asyncio.subprocess.PIPE,
        "stderr": asyncio.subprocess.STDOUT,
        "start_new_session": True,
    }
    if isinstance(argv, str):
        return await asyncio.create_subprocess_shell(argv, **common)
    return await asyncio.create_subprocess_exec(*argv, **common)


async def kill_group(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM the process group, then SIGKILL whatever is left of it."""
    if proc.returncode is None:
        _signal_group(proc.pid, signal.SIGTERM)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(KILL_GRACE):
                await proc.wait()
    _signal_group(proc.pid, signal.SIGKILL)  # stragglers of a group whose leader is gone
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(KILL_GRACE):
            await proc.wait()


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def last_line(text: str) -> str:
    """The last non-empty line of some output, short enough for a one-line message."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:200] if lines else "(no output)"
