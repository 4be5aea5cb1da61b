"""Through a strict transport (vscode-jsonrpc, as VS Code uses), stray prints and children writing to fd 1
after startup do not corrupt the JSON-RPC stream: initialize and a whole fix go through."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lsp_harness import FIX, TEST_FILE, fix_turns, server_env, uri

HERE = Path(__file__).parent
CACHE = Path.home() / ".cache" / "fixloop-lsp-node"
CANDIDATES = [
    HERE / ".node" / "node_modules",
    CACHE / "node_modules",
    HERE.parent.parent / "client-vscode" / "node_modules",
]

# The server as `fixloop serve` starts it, plus noise on fd 1 right after the guard is installed.
NOISY_SERVER = """
import subprocess
import fixloop.lsp.stdout_guard as guard
original = guard.guard_stdout
def noisy():
    channel = original()
    print("a stray print after startup")
    subprocess.run(["echo", "a child process writing to fd 1"])
    return channel
guard.guard_stdout = noisy
from fixloop.lsp import serve
raise SystemExit(serve())
"""


def node_modules() -> Path:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    for candidate in CANDIDATES:
        if (candidate / "vscode-jsonrpc" / "package.json").is_file():
            return candidate
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed, so vscode-jsonrpc cannot be fetched")
    CACHE.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--silent", "vscode-jsonrpc@8"],
            cwd=CACHE,
            check=True,
            capture_output=True,
            timeout=180,
        )
    except (subprocess.SubprocessError, OSError) as error:
        pytest.skip(f"npm could not install vscode-jsonrpc (registry unreachable?): {error}")
    return CACHE / "node_modules"


def strict_client(spec: dict, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    """strict_client.js (vscode-jsonrpc, failing on any byte that is not JSON-RPC) run against `spec`."""
    command = ["node", str(HERE / "strict_client.js"), json.dumps(spec)]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout, check=False)


def test_a_fix_through_vscode_jsonrpc(project: Path, scripted_model, tmp_path: Path) -> None:
    modules = node_modules()
    test_id = f"{TEST_FILE}::test_add"
    model = scripted_model(fix_turns([test_id]))
    spec = {
        "server": [sys.executable, "-c", NOISY_SERVER],
        "rootUri": uri(project),
        "command": FIX,
        "arguments": [{"testId": test_id}],
        "timeout": 90,
    }
    proc = strict_client(spec, {**server_env(tmp_path, model.base_url), "NODE_PATH": str(modules)}, 120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["errors"] == [], report["errors"]
    assert report["result"]["status"] == "fixed", report["result"]
    assert report["result"]["applied"] is True
    assert report["progress"][0] == "begin" and report["progress"][-1] == "end"
    assert len(report["edits"]) == 1
    assert "a stray print after startup" in proc.stderr


UNGUARDED_SERVER = """
import sys
from fixloop.lsp import serve
print("a stray print on the real stdout", flush=True)
raise SystemExit(serve(stdout=sys.stdout.buffer))
"""


def test_the_strict_client_does_catch_a_corrupted_stream(project: Path, tmp_path: Path) -> None:
    """Control: without the guard the same noise breaks vscode-jsonrpc, so the test above means something."""
    modules = node_modules()
    spec = {
        "server": [sys.executable, "-c", UNGUARDED_SERVER],
        "rootUri": uri(project),
        "command": "fixloop.server.cancel",
        "arguments": [],
        "timeout": 6,
    }
    proc = strict_client(spec, {**server_env(tmp_path, None), "NODE_PATH": str(modules)}, 60)
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["errors"] or report["result"] == {"timeout": True}
