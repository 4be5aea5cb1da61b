"""Integration fixtures: run the real engine on a fixture project against the scripted model server."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from fixloop.config import load_settings
from fixloop.engine import FixRequest, FixRun
from fixloop.events import Event, Notice
from fixloop.result import FixResult
from scripted_model import ScriptedModelServer


@dataclass
class FixOutcome:
    """A finished run with everything a test wants to look at."""

    result: FixResult
    events: list[Event]
    server: ScriptedModelServer
    root: Path
    notices: list[str] = field(default_factory=list)

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


@pytest.fixture
def run_fix(scripted_model, fixture_project) -> Callable[..., Any]:
    """`await run_fix(project, script, test_ids=None, **settings)`: FixRun on a fresh copy of a fixture."""
    from support import load_fix

    async def run(
        project: str | Path,
        script: list[dict] | dict,
        test_ids: list[str] | None = None,
        server_options: dict[str, Any] | None = None,
        **overrides: Any,
    ) -> FixOutcome:
        root = project if isinstance(project, Path) else fixture_project(project)
        name = root.name if isinstance(project, Path) else project
        ids = tuple(test_ids or load_fix(name)["test_ids"])
        server = scripted_model(script, **(server_options or {}))
        env = {
            "FIXLOOP_BASE_URL": server.base_url,
            "FIXLOOP_MODEL": "scripted",
            "FIXLOOP_MUTANTS": "off",
            "FIXLOOP_POOL_SHARE": "0",
            "FIXLOOP_API_KEY": "none",
        }
        settings = load_settings(root, {"testTimeout": 20, **overrides}, env=env)
        events: list[Event] = []
        result = await FixRun(FixRequest(root, ids), settings, events.append).execute()
        outcome = FixOutcome(result, events, server, root)
        outcome.notices = [e.text for e in events if isinstance(e, Notice)]
        return outcome

    return run


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Transcripts and shadows of a test go to its own cache folder, not the user's."""
    cache = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    # the fixture projects need no third-party pytest plugins; not loading ours makes each run ~4x faster
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    return cache
