"""The adversarial suite's set-up: one trap per module and the scripted model (tests/conftest.py prints the
table of outcomes)."""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from hostile import Trap, build_trap, kill_marked


@pytest.fixture(scope="module")
def trap(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Trap]:
    """The user's project with its secrets and links out; HOME, TMPDIR and the cache point into the trap,
    so anything a run writes outside the project is seen. A module's `TRAP_FILES` adds files to it."""
    built = build_trap(tmp_path_factory.mktemp("trap"), getattr(request.module, "TRAP_FILES", None))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", str(built.home))
        patch.setenv("TMPDIR", str(built.tmp))
        patch.setenv("XDG_CACHE_HOME", str(built.cache))
        patch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        patch.setattr(tempfile, "tempdir", str(built.tmp))
        yield built
    kill_marked()


@pytest.fixture(autouse=True)
def isolated_cache() -> None:
    """The trap's cache is the isolated one (overrides tests/integration's per-test cache)."""
