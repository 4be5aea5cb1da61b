"""Language-server overhead with the scripted model: executeCommand -> first $/progress, and per-step time
spent outside the model and pytest (median over several fixes). Run: python benchmarks/lsp_overhead.py [-n 5]

Per-step overhead is the gap between consecutive chat requests (the scripted model answers at once),
for steps whose tool is read-only (no pytest): parsing the answer, running the tool, emitting events,
sending $/progress and window/logMessage, and building the next prompt.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities, make_test_lsp_client

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the scripted model is test support
from scripted_model import ScriptedModelServer

CALC = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
TEST_ID = "tests/test_calc.py::test_add"
READS = 10  # read-only steps per fix: these give the per-step figure


class TimedList(list):
    """The scripted model's request log, stamped with arrival times."""

    def __init__(self) -> None:
        super().__init__()
        self.times: list[float] = []

    def append(self, item: Any) -> None:
        self.times.append(time.monotonic())
        super().append(item)


def script() -> list[dict[str, Any]]:
    # Distinct arguments each time, so the loop's stuck detection does not step in.
    turns = [
        {
            "content": f"Reading calc.py ({n}).",
            "tool_calls": [
                {"name": "read_file", "arguments": {"path": "calc.py", "start_line": 1, "end_line": n + 1}}
            ],
        }
        for n in range(READS)
    ]
    turns.append(
        {
            "content": "Fixing the sign.",
            "tool_calls": [
                {
                    "name": "edit_file",
                    "arguments": {"path": "calc.py", "old_text": "return a - b", "new_text": "return a + b"},
                }
            ],
        }
    )
    turns.append(
        {"content": "Done.", "tool_calls": [{"name": "submit", "arguments": {"summary": "add adds"}}]}
    )
    return turns


def make_project(root: Path) -> None:
    (root / "tests").mkdir(parents=True)
    (root / "calc.py").write_text(CALC)
    (root / "conftest.py").write_text("")
    (root / "tests" / "test_calc.py").write_text(TEST)
    for args in (
        ["init", "-q"],
        ["config", "user.name", "b"],
        ["config", "user.email", "b@b.invalid"],
        ["add", "-A"],
        ["commit", "-q", "-m", "initial"],
    ):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


async def one_fix(workdir: Path) -> dict[str, Any]:
    root = workdir / "proj"
    make_project(root)
    model = ScriptedModelServer(script())
    model.requests = TimedList()
    base_url = model.start()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FIXLOOP_", "OPENAI_"))}
    env.update(
        FIXLOOP_BASE_URL=base_url,
        FIXLOOP_MODEL="scripted",
        FIXLOOP_API_KEY="k",
        XDG_CACHE_HOME=str(workdir / "xdg"),
        XDG_STATE_HOME=str(workdir / "xdg"),
    )
    client: LanguageClient = make_test_lsp_client()
    first_progress: list[float] = []

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(params: types.ApplyWorkspaceEditParams) -> types.ApplyWorkspaceEditResult:
        return types.ApplyWorkspaceEditResult(applied=True)

    config = ClientServerConfig(server_command=[sys.executable, "-m", "fixloop.lsp"], server_env=env)
    await client.start_io(*config.get_server_command(), env=env)
    try:
        await client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities("visual-studio-code"),
                root_uri=root.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="proj")],
            )
        )

        async def stamp_first_progress() -> None:
            await client.wait_for_notification(types.PROGRESS)
            first_progress.append(time.monotonic())

        stamper = asyncio.create_task(stamp_first_progress())
        sent = time.monotonic()
        result = await asyncio.wait_for(
            client.workspace_execute_command_async(
                types.ExecuteCommandParams(
                    command="fixloop.server.fixFailingTest", arguments=[{"testId": TEST_ID}]
                )
            ),
            120,
        )
        total = time.monotonic() - sent
        await asyncio.wait_for(stamper, 1)
        await asyncio.wait_for(client.shutdown_session(), 10)
    finally:
        await client.stop()
        model.stop()
    times = model.requests.times
    gaps = [b - a for a, b in itertools.pairwise(times[: READS + 1])]
    return {
        "status": result["status"],
        "first_progress": first_progress[0] - sent,
        "gaps": gaps,
        "total": total,
        "steps": result["steps"],
    }


async def engine_only(workdir: Path) -> list[float]:
    """The same fix through FixRun in-process with no face attached: the engine's own share."""
    from fixloop.config import Settings
    from fixloop.engine import FixRequest, FixRun

    root = workdir / "proj"
    make_project(root)
    model = ScriptedModelServer(script())
    model.requests = TimedList()
    base_url = model.start()
    os.environ.update(
        XDG_CACHE_HOME=str(workdir / "xdg"), XDG_STATE_HOME=str(workdir / "xdg"), FIXLOOP_API_KEY="k"
    )
    try:
        settings = Settings(model="scripted", base_url=base_url)
        run = FixRun(FixRequest(root=root, test_ids=(TEST_ID,)), settings)
        await run.execute()
    finally:
        model.stop()
    times = model.requests.times
    return [b - a for a, b in itertools.pairwise(times[: READS + 1])]


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=5)
    args = parser.parse_args()
    firsts: list[float] = []
    gaps: list[float] = []
    totals: list[float] = []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="fixloop-bench-") as tmp:
            run = await one_fix(Path(tmp))
        if run["status"] != "fixed":
            print(f"run ended {run['status']}; figures not valid", file=sys.stderr)
            return 1
        firsts.append(run["first_progress"])
        gaps.extend(run["gaps"])
        totals.append(run["total"])
    engine_gaps: list[float] = []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="fixloop-bench-") as tmp:
            engine_gaps.extend(await engine_only(Path(tmp)))
    print(f"runs: {args.runs}, read-only steps measured: {len(gaps)}")
    print(
        f"executeCommand -> first $/progress: median {statistics.median(firsts) * 1000:.1f} ms "
        f"(min {min(firsts) * 1000:.1f}, max {max(firsts) * 1000:.1f})"
    )
    print(
        f"per-step overhead outside model and pytest: median {statistics.median(gaps) * 1000:.1f} ms "
        f"(p90 {sorted(gaps)[int(len(gaps) * 0.9)] * 1000:.1f})"
    )
    engine, face = statistics.median(engine_gaps), statistics.median(gaps) - statistics.median(engine_gaps)
    print(
        f"  of which the engine alone (no LSP face): median {engine * 1000:.1f} ms; "
        f"the LSP face adds {face * 1000:.1f} ms"
    )
    print(
        f"whole fix (baseline + {READS + 2} model turns + verification): median "
        f"{statistics.median(totals):.2f} s"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
