"""Fixtures of the real-editor tests: where scripts/setup-e2e.sh put the editors, the scripted model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from editors_support import E2EEnv, ScriptedModel, missing


@pytest.fixture(scope="session")
def e2e_env() -> E2EEnv:
    prefix = Path(os.environ.get("FIXLOOP_E2E_PREFIX", "/opt/fixloop-e2e"))
    env_file = prefix / "env.json"
    if not env_file.is_file():
        missing(f"{env_file} does not exist")
    data = json.loads(env_file.read_text())
    return E2EEnv(**{key: Path(data[key]) for key in E2EEnv.__dataclass_fields__})


@pytest.fixture
def scripted_model_process(tmp_path: Path) -> Iterator[Callable[[list[dict[str, Any]]], ScriptedModel]]:
    """Factory: a scripted model server in its own process (the editor's server talks to it over HTTP)."""
    started: list[subprocess.Popen[str]] = []

    def start(turns: list[dict[str, Any]]) -> ScriptedModel:
        script = tmp_path / f"script-{len(started)}.json"
        script.write_text(json.dumps({"turns": turns}))
        process = subprocess.Popen(
            [sys.executable, "-m", "scripted_model", "--script", str(script), "--quiet"],
            cwd=Path(__file__).parents[1],  # tests/, where the scripted_model package lives
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        started.append(process)
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        if not base_url.startswith("http"):
            raise RuntimeError(f"scripted model did not start (first line {base_url!r})")
        return ScriptedModel(base_url, process)

    yield start
    for process in started:
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
