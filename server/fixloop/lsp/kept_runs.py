"""Runs kept after they proposed a fix, so that "Try another fix" can go on with their conversation."""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fixloop.lsp.errors import BadArguments
from fixloop.result import FileChange

KEEP_SECONDS = 30 * 60
MAX_KEPT = 20


@dataclass(frozen=True)
class KeptRun:
    """What "Try another fix" needs of a finished run: where and what it fixed, how, and what it proposed."""

    root: Path
    test_ids: tuple[str, ...]
    messages: tuple[dict[str, Any], ...]
    proposal: tuple[FileChange, ...]
    kept_at: float = field(default_factory=time.monotonic)
    pool: tuple[Any, ...] = ()  # the run's other verified fixes, best first (engine PooledFix)


class KeptRuns:
    """The last few runs that proposed a fix, by run id, each for `KEEP_SECONDS`."""

    def __init__(self, seconds: float = KEEP_SECONDS, most: int = MAX_KEPT) -> None:
        self.seconds = seconds
        self.most = most
        self._runs: OrderedDict[str, KeptRun] = OrderedDict()

    def keep(self, run_id: str, run: KeptRun) -> None:
        self._runs[run_id] = run
        while len(self._runs) > self.most:
            self._runs.popitem(last=False)

    def get(self, run_id: str) -> KeptRun:
        """The kept run, or a BadArguments error saying why there is none."""
        now = time.monotonic()
        for old in [key for key, run in self._runs.items() if now - run.kept_at > self.seconds]:
            del self._runs[old]
        run = self._runs.get(run_id)
        if run is None:
            raise BadArguments(
                f"run {run_id} is not kept: fixloop keeps a run that proposed a fix for "
                f"{self.seconds / 60:.0f} minutes; start a new fix instead"
            )
        return run
