"""RunRegistry: the fixes in flight, so the same test is not fixed twice at once and cancel can find them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fixloop.lsp.errors import AlreadyRunning


@dataclass(frozen=True)
class ActiveRun:
    """One fixFailingTest request in flight."""

    run_id: str
    test_ids: tuple[str, ...]
    cancel: Callable[[], None]
    root: Path | None = None  # the workspace folder: the same test id in two folders is two tests


class RunRegistry:
    """Active runs by run id; a test (workspace folder and id) belongs to at most one run."""

    def __init__(self) -> None:
        self._runs: dict[str, ActiveRun] = {}

    def claim(self, run: ActiveRun) -> None:
        for other in self._runs.values():
            if other.root != run.root:
                continue
            busy = sorted(set(other.test_ids) & set(run.test_ids))
            if busy:
                raise AlreadyRunning(
                    f"{busy[0]} is already being fixed (run {other.run_id}); "
                    "wait for it or cancel it with fixloop.server.cancel"
                )
        self._runs[run.run_id] = run

    def release(self, run_id: str) -> None:
        self._runs.pop(run_id, None)

    def active(self) -> list[ActiveRun]:
        return list(self._runs.values())

    def cancel(self, run_id: str | None = None) -> list[str]:
        """Cancel one run (or all when `run_id` is None); returns the run ids cancelled."""
        chosen = [run for run in self._runs.values() if run_id is None or run.run_id == run_id]
        for run in chosen:
            run.cancel()
        return [run.run_id for run in chosen]
