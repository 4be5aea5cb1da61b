"""The VS Code extension's launcher (client-vscode/bundled/tool/launch_server.py): which fixloop it would
run (bundled or the interpreter's own), and why it cannot, before the extension starts the server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

LAUNCHER = Path(__file__).resolve().parents[2] / "client-vscode" / "bundled" / "tool" / "launch_server.py"
ABI = f"cp{sys.version_info.major}{sys.version_info.minor}"


def fake_extension(root: Path, abis: list[str], packages: list[str]) -> Path:
    """An installed extension's bundled/ folder: the launcher, a stand-in fixloop, a native manifest."""
    tool = root / "bundled" / "tool"
    tool.mkdir(parents=True)
    shutil.copy(LAUNCHER, tool)
    package = root / "bundled" / "libs" / "fixloop"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('__version__ = "9.9.9-bundled"\n')
    (package / "cli.py").write_text("def main(argv=None):\n    return 0\n")
    native = root / "bundled" / "native"
    native.mkdir()
    manifest = {"abis": abis, "platform": "linux-x64", "packages": packages}
    (native / "manifest.json").write_text(json.dumps(manifest))
    for abi in abis:
        (native / abi).mkdir()
        for name in packages:
            (native / abi / f"{name}.py").write_text("")
    return tool / "launch_server.py"


def check(launcher: Path, python: str = sys.executable, **env: str) -> dict[str, object]:
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | env
    done = subprocess.run([python, str(launcher), "--check"], capture_output=True, text=True, env=environment,
                          cwd=launcher.parent, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_use_bundled_runs_the_fixloop_inside_the_extension(tmp_path: Path):
    launcher = fake_extension(tmp_path, [ABI], ["fake_native_part"])
    facts = check(launcher)
    assert facts["ok"] is True and facts["bundled"] is True
    assert facts["fixloopVersion"] == "9.9.9-bundled"
    assert facts["fixloop"] == str(tmp_path / "bundled" / "libs" / "fixloop")


def test_from_environment_ignores_the_bundle(tmp_path: Path):
    launcher = fake_extension(tmp_path, [ABI], [])
    facts = check(launcher, FIXLOOP_IMPORT_STRATEGY="fromEnvironment")
    assert facts["ok"] is True and facts["bundled"] is False
    assert facts["fixloopVersion"] != "9.9.9-bundled"  # this venv's own fixloop


def test_a_python_the_bundle_has_no_compiled_parts_for_is_refused_with_the_versions_it_has(tmp_path: Path):
    launcher = fake_extension(tmp_path, ["cp399"], ["fake_native_part"])
    facts = check(launcher)
    assert facts["ok"] is False and facts["problem"] == "no_native"
    assert facts["abis"] == ["cp399"] and facts["platform"] == "linux-x64"


def test_an_interpreter_without_fixloop_is_reported_not_installed(tmp_path: Path):
    python = shutil.which("python3", path="/usr/bin:/bin")  # Debian's, without fixloop
    imports = python and subprocess.run([python, "-c", "import fixloop"], capture_output=True)
    if not imports or imports.returncode == 0:
        pytest.skip("needs a system python3 without fixloop")
    launcher = fake_extension(tmp_path, [], [])
    facts = check(launcher, python, FIXLOOP_IMPORT_STRATEGY="fromEnvironment")
    assert facts["ok"] is False and facts["problem"] == "not_installed"


def test_a_python_older_than_3_11_is_refused_with_its_version(tmp_path: Path):
    old = [p for p in (shutil.which(f"python3.{minor}") for minor in (10, 9, 8)) if p]
    old += [str(p) for p in sorted(Path.home().glob(".pyenv/versions/3.[6-9]*/bin/python"))]
    old += [str(p) for p in sorted(Path.home().glob(".pyenv/versions/3.10*/bin/python"))]
    if not old:
        pytest.skip("no Python older than 3.11 on this machine")
    launcher = fake_extension(tmp_path, [ABI], [])
    facts = check(launcher, old[-1])
    assert facts["ok"] is False and facts["problem"] == "too_old"
    served = subprocess.run([old[-1], str(launcher)], capture_output=True, text=True, timeout=60)
    assert served.returncode == 3
    assert "fixloop needs Python 3.11 or newer" in served.stderr and "\n" not in served.stderr.strip()
