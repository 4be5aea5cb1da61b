"""Shared pytest fixtures: the scripted model server and fixture-project copies."""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # `import support` from any test folder

from scripted_model import ScriptedModelServer
from support import copy_project
from tool_made_projects import ProjectBuilder

# A suite started in the background by a script (`cmd &` without job control) inherits SIGINT ignored, and
# so would every process it starts: the Ctrl-C tests stand for a terminal, whose foreground job has it.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def scripted_model() -> Iterator[Callable[..., ScriptedModelServer]]:
    """Factory: `scripted_model(script, **kwargs)` returns a started server, stopped at teardown."""
    servers: list[ScriptedModelServer] = []

    def start(script: list[dict[str, Any]] | dict[str, Any], **kwargs: Any) -> ScriptedModelServer:
        server = ScriptedModelServer(script, **kwargs)
        server.start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def fixture_project(tmp_path: Path) -> Callable[..., Path]:
    """Factory: `fixture_project(name, git=None)` copies fixtures/projects/<name> to tmp_path/<name>."""

    def make(name: str, git: bool | None = None) -> Path:
        return copy_project(name, tmp_path / name, git=git)

    return make


@pytest.fixture(scope="session")
def tool_made(tmp_path_factory: pytest.TempPathFactory) -> ProjectBuilder:
    """`tool_made.get(name)`: a project set up by the real tools (venv + pip, uv, poetry…), built once per
    session on first use; tests must leave it as they found it (no --apply)."""
    return ProjectBuilder(tmp_path_factory.mktemp("tool-made"))
