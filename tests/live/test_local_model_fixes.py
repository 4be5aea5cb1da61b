"""Live: the engine against the real local model (Qwen2.5-Coder 1.5B on llama.cpp) on five fixtures.

Not part of CI (`-m live`). Needs FIXLOOP_BASE_URL/FIXLOOP_MODEL pointing at a running server (e.g.
../shared/local-model/serve.sh) or FIXLOOP_LIVE_MODEL=local for the managed local model. Each run's
transcript is copied into the test's tmp folder as an artifact, and a figures line is printed.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from fixloop.config import load_settings
from fixloop.engine import FixRequest, FixRun
from support import copy_project, load_fix

pytestmark = pytest.mark.live

LIVE_FIXTURES = ["demo", "easy_operator", "easy_compare", "easy_slice", "class_method"]


def _live_overrides() -> dict[str, str]:
    model = os.environ.get("FIXLOOP_LIVE_MODEL") or os.environ.get("FIXLOOP_MODEL")
    if not model:
        pytest.skip("set FIXLOOP_LIVE_MODEL=local, or FIXLOOP_BASE_URL and FIXLOOP_MODEL, for live tests")
    return {"model": model}


@pytest.mark.parametrize("name", LIVE_FIXTURES)
async def test_local_model_fixes_fixture(name: str, tmp_path: Path):
    overrides = _live_overrides()
    fix = load_fix(name)
    root = copy_project(name, tmp_path / name)
    settings = load_settings(root, {**overrides, "maxSteps": 12, "testTimeout": 30})
    run = FixRun(FixRequest(root, tuple(fix["test_ids"])), settings)
    result = await run.execute()
    if run.transcript_path and run.transcript_path.exists():
        shutil.copy(run.transcript_path, tmp_path / f"{name}.transcript.jsonl")
    print(
        f"\nLIVE {name}: {result.status} steps={result.steps} prompt={result.prompt_tokens} "
        f"completion={result.completion_tokens} seconds={result.seconds:.1f}"
    )
    assert result.status == "fixed", result.summary
