"""The VS Code extension's own unit tests (client-vscode/test, node:test): progress line, transcript.

Marked e2e because they need client-vscode/node_modules, which scripts/setup-e2e.sh installs."""

from __future__ import annotations

import subprocess

import pytest
from editors_support import REPO_ROOT, E2EEnv, require

pytestmark = pytest.mark.e2e


def test_extension_unit_tests_pass(e2e_env: E2EEnv) -> None:
    extension = REPO_ROOT / "client-vscode"
    require(extension / "node_modules" / "esbuild", "client-vscode/node_modules (npm ci)")
    node = str(require(e2e_env.node, "Node 24"))
    subprocess.run([node, "esbuild.mjs", "--tests"], cwd=extension, check=True, timeout=120)
    files = sorted(str(p) for p in (extension / "out" / "test").glob("*.test.js"))
    assert files, "no compiled tests in client-vscode/out/test"
    done = subprocess.run(
        [node, "--test", *files], cwd=extension, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
