"""Warm pytest processes (zygote.py) for the many test runs of one fix: each run is forked from a process
that has pytest imported already, instead of starting an interpreter and importing pytest again.

Used on Linux for a test command of the form `PYTHON -m pytest`; a zygote runs under the reaper like a
cold run (its writes confined the same way) and serves one run at a time, so concurrent runs get one each.
A zygote that cannot start (no pytest, an interpreter too old) turns the pool off: runs start cold as
before. `close()` ends every zygote; one left behind ends at the end of its input or after IDLE seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from fixloop.platform_support import CURRENT, signal_tree
from fixloop.pytest_runner.run_env import PER_RUN

ZYGOTE = Path(__file__).with_name("zygote.py")
STARTUP_TIMEOUT = 60.0  # seconds for a zygote to import pytest and say it is ready


def warm_capable(command: Sequence[str]) -> bool:
    """Whether runs of `command` can be forked from a warm pytest: `PYTHON -m pytest` on Linux."""
    return sys.platform.startswith("linux") and len(command) == 3 and tuple(command[1:]) == ("-m", "pytest")


class Zygote:
    """One warm pytest under its reaper: `send` starts a run and gives its leader's pid, `status` its end."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    @classmethod
    async def start(
        cls, prefix: Sequence[str], python: str, cwd: Path, env: Mapping[str, str]
    ) -> Zygote | None:
        try:
            proc = await asyncio.create_subprocess_exec(
                *prefix, python, str(ZYGOTE),
                cwd=cwd, env=dict(env),
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL, **CURRENT.new_group(),
            )  # fmt: skip
        except OSError:
            return None
        zygote = cls(proc)
        try:
            async with asyncio.timeout(STARTUP_TIMEOUT):
                ready = await zygote._read()
        except (TimeoutError, ValueError, ConnectionResetError):
            ready = {}
        except BaseException:  # cancelled while it starts: it is no one's yet
            await asyncio.shield(zygote.kill())
            raise
        if not ready.get("ready"):
            await zygote.kill()
            return None
        return zygote

    async def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = await self.proc.stdout.readline()
        if not line:
            raise ConnectionResetError("the warm pytest ended")
        return json.loads(line)

    async def send(self, request: Mapping[str, Any]) -> int:
        """Start a run; its leader's pid (the head of the run's process group)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(request) + "\n").encode("utf-8"))
        await self.proc.stdin.drain()
        return int((await self._read())["pid"])

    async def status(self) -> int:
        """The started run's wait status, once it has ended."""
        return int((await self._read())["status"])

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None

    async def kill(self) -> None:
        """End the zygote and whatever it still runs (its reaper sweeps them)."""
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        for signal_name in ("SIGTERM", "SIGKILL"):
            if self.alive:
                signal_tree(self.proc.pid, signal_name)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(3.0):
                        await self.proc.wait()


class WarmRun:
    """A forked run, as the runner waits for and ends a process: `pid` heads its group, `wait()` gives
    the exit code (negative: the signal); its output is read from a file once it has ended."""

    stdout = None  # no pipe: the leader writes the output's tail to `output`

    def __init__(self, pool: WarmPool, zygote: Zygote, pid: int, output: Path) -> None:
        self.pool, self.zygote, self.pid, self.output = pool, zygote, pid, output
        self.returncode: int | None = None
        self._ended = asyncio.ensure_future(self._end())

    async def _end(self) -> int:
        try:
            code = os.waitstatus_to_exitcode(await self.zygote.status())
        except (ConnectionResetError, ValueError, KeyError):
            await self.zygote.kill()  # a test ended the zygote: the run died with it
            code = -9
        self.pool.give_back(self.zygote)  # a killed one is only let go
        return code

    async def wait(self) -> int:
        if self.returncode is None:
            self.returncode = await asyncio.shield(self._ended)
        return self.returncode

    def read_output(self) -> bytes:
        try:
            return self.output.read_bytes()
        except OSError:
            return b""


class WarmPool:
    """The zygotes of one runner and its copies: `python` under the reaper command `prefix`, started in
    `home` (a folder that outlives the runs), each run's output cut to its last `cap` bytes; `spawn` starts
    a run, None when it must start cold."""

    def __init__(self, python: str, prefix: Sequence[str], home: Path, cap: int) -> None:
        self.python, self.prefix, self.home, self.cap = python, tuple(prefix), home, cap
        self.idle: list[Zygote] = []
        self.busy: set[Zygote] = set()
        self.off = False

    async def spawn(
        self, args: Sequence[str], cwd: Path, env: Mapping[str, str], workdir: Path, *, hook: bool
    ) -> WarmRun | None:
        """Start `python -m pytest ARGS` in `cwd` with `env` (the run's own folder `workdir`, which holds the
        shadow's import hook when `hook`) from a warm pytest."""
        if self.off:
            return None
        zygote = await self._take(env, workdir)
        if zygote is None:
            return None
        output = workdir / "output.txt"
        request = {"argv": list(args), "cwd": str(cwd), "env": dict(env), "output": str(output)}
        try:
            pid = await zygote.send({**request, "cap": self.cap, "hook": hook})
        except (ConnectionResetError, BrokenPipeError, ValueError, KeyError):
            await zygote.kill()
            self.give_back(zygote)
            return None
        return WarmRun(self, zygote, pid, output)

    async def _take(self, env: Mapping[str, str], workdir: Path) -> Zygote | None:
        while self.idle:
            zygote = self.idle.pop()
            if zygote.alive:
                self.busy.add(zygote)
                return zygote
        zygote = await Zygote.start(self.prefix, self.python, self.home, zygote_env(env, workdir))
        if zygote is None:
            self.off = True
            return None
        self.busy.add(zygote)
        return zygote

    def give_back(self, zygote: Zygote) -> None:
        self.busy.discard(zygote)
        if zygote.alive:
            self.idle.append(zygote)

    async def close(self) -> None:
        zygotes, self.idle, self.busy = [*self.idle, *self.busy], [], set()
        await asyncio.gather(*(zygote.kill() for zygote in zygotes), return_exceptions=True)


def zygote_env(env: Mapping[str, str], workdir: Path) -> dict[str, str]:
    """A run's environment without what is its own: the mark (a zygote must outlive its first run's sweep),
    the report and coverage files, and the run's folder on PYTHONPATH (its import hook is per run)."""
    kept = {name: value for name, value in env.items() if name not in PER_RUN}
    entries = [
        entry for entry in kept.get("PYTHONPATH", "").split(os.pathsep) if entry and entry != str(workdir)
    ]
    kept["PYTHONPATH"] = os.pathsep.join(entries)
    if not entries:
        del kept["PYTHONPATH"]
    return kept
