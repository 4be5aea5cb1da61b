"""A Ctrl-C (or the editor's Cancel) that lands just as a bounded wait ends still cancels the run.

On Python 3.11, `asyncio.wait_for` returns the inner result and drops the cancel when both happen in
the same turn of the loop; asyncio.run cancels the main task only once on the first Ctrl-C, so the run
went on as if nothing had been pressed. fixloop bounds its waits with `asyncio.timeout` instead."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import pytest

from fixloop.pytest_runner.pytest_output import OutputTail
from fixloop.pytest_runner.runner import PytestRunner

PACKAGE = Path(__file__).resolve().parents[2] / "server" / "fixloop"


def test_no_module_bounds_a_wait_with_wait_for() -> None:
    calls = [
        f"{path.relative_to(PACKAGE)}:{node.lineno}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and ast.unparse(node.func) in ("asyncio.wait_for", "wait_for")
    ]
    assert calls == [], "use `async with asyncio.timeout(...)`: wait_for can drop a cancel (3.11)"


class _EndingProcess:
    """A test process whose end the test decides: `wait()` returns once `ended` is set."""

    def __init__(self) -> None:
        self.ended: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self.pid = 2**22 + 1  # no such process: ending its group is a no-op
        self.stdout = None

    @property
    def returncode(self) -> int | None:
        return self.ended.result() if self.ended.done() else None

    async def wait(self) -> int:
        return await self.ended


async def test_a_cancel_in_the_turn_the_test_process_ends_cancels_the_run(tmp_path: Path) -> None:
    runner = PytestRunner(tmp_path, timeout=30)
    process = _EndingProcess()
    waiting = asyncio.ensure_future(runner._wait(process, OutputTail(1024)))  # type: ignore[arg-type]
    await asyncio.sleep(0.01)  # parked on the process's end
    process.ended.set_result(1)  # the run ends…
    waiting.cancel()  # …and Ctrl-C lands before the waiter has woken
    with pytest.raises(asyncio.CancelledError):
        await waiting
