"""What a fix run is asked to do: the tests to fix, unsaved buffers, a rejected run to go on from, and what a
face has already worked out (the tests' project, the run's id), so the engine does not work it out again."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fixloop.agent.fix_pool import PooledFix
from fixloop.project_root import ProjectTarget
from fixloop.result import FileChange


@dataclass(frozen=True)
class FixRequest:
    """What to fix: test ids relative to `root` (the workspace folder), and unsaved editor buffers
    (relpath -> text). The run works in the tests' project (project_root.py): a folder below `root` in a
    monorepo; what it returns is relative to `root` again."""

    root: Path
    test_ids: tuple[str, ...]
    overlays: Mapping[str, str] = field(default_factory=dict)
    previous: PreviousRun | None = None  # "try another fix": the run whose proposal the user rejected
    target: ProjectTarget | None = None  # the tests' project, when the face located it (else the run does)
    run_id: str = ""  # the run's id, when the face named it (else the run makes one)


@dataclass(frozen=True)
class PreviousRun:
    """A finished run whose proposed fix the user rejected: its conversation goes on, without that fix."""

    messages: tuple[dict[str, Any], ...]
    rejected: tuple[FileChange, ...]  # the proposal, relative to the tests' project
    reason: str = ""
    pool: tuple[PooledFix, ...] = ()  # its other verified fixes, best first: proposed, verified again, first
