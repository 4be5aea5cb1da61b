"""A test run's process as the runner waits for it and ends it: a cold run's asyncio process or a run
forked from a warm pytest (warm.py), both heading a process group of their own."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Protocol

from fixloop.platform_support import CURRENT, signal_tree


class TestProcess(Protocol):
    """A test run as the runner waits for and ends it: a cold one's asyncio process, or a forked `WarmRun`;
    `pid` heads its process group."""

    __test__ = False  # not a pytest test class

    pid: int
    returncode: int | None
    stdout: asyncio.StreamReader | None

    async def wait(self) -> int: ...


async def end_group(proc: TestProcess, grace: float) -> None:
    """SIGTERM the process group, SIGKILL what is left after `grace` (Windows: taskkill /T, once)."""
    if proc.returncode is None:
        await asyncio.to_thread(signal_tree, proc.pid, "SIGTERM")
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(grace):
                await proc.wait()
    if not CURRENT.windows:
        signal_tree(proc.pid, "SIGKILL")
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(grace * 2):
            await proc.wait()
