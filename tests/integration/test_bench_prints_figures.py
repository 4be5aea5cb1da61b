"""`fixloop bench` runs the engine on fixture projects and prints one figures line per run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from support import fix_script


def test_bench_prints_figures_for_a_fixture(scripted_model, tmp_path: Path):
    server = scripted_model(fix_script("demo"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FIXLOOP_", "OPENAI_"))}
    env.update(FIXLOOP_BASE_URL=server.base_url, FIXLOOP_MODEL="scripted", FIXLOOP_API_KEY="none",
               XDG_CACHE_HOME=str(tmp_path / "cache"))
    rows_file = tmp_path / "rows.json"
    done = subprocess.run([sys.executable, "-m", "fixloop", "bench", "demo", "--json", str(rows_file)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "fixed 1 of 1 runs" in done.stdout
    rows = json.loads(rows_file.read_text())
    assert rows[0]["project"] == "demo" and rows[0]["status"] == "fixed" and rows[0]["steps"] >= 3
