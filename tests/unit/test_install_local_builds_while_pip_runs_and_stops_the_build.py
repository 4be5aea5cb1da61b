"""scripts/install-local.sh starts the llama-server build before pip and the model download, waits for it,
and stops the whole build (its compilers too) when it is stopped itself; the build script stands in here
as a fake that writes a llama-server after a child process sleeps."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the installer is a bash script")

FAKE_BUILD = """#!/usr/bin/env bash
venv="$2"  # called as: build-llama-server.sh --venv DIR
echo $$ > "$venv/build.pid"
sleep "${FAKE_BUILD_SECONDS:-0}" &  # a child, as the compiler is
wait
printf '#!/bin/sh\\nexit 0\\n' > "$venv/bin/llama-server"
chmod +x "$venv/bin/llama-server"
"""


def installer(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the installer beside the fake build, and a venv whose python is this one (fixloop is
    importable there, so the installer runs no pip)."""
    root = tmp_path / "root"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "install-local.sh", root / "scripts" / "install-local.sh")
    (root / "scripts" / "build-llama-server.sh").write_text(FAKE_BUILD)
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    python.chmod(0o755)
    return root / "scripts" / "install-local.sh", venv


def environment(venv: Path, seconds: int) -> dict[str, str]:
    server = str(venv / "bin" / "llama-server")
    return {**os.environ, "FIXLOOP_LLAMA_SERVER": server, "FAKE_BUILD_SECONDS": str(seconds)}


def test_the_build_runs_and_the_installer_says_which_server_runs(tmp_path: Path) -> None:
    script, venv = installer(tmp_path)
    done = subprocess.run(
        ["bash", str(script), "--venv", str(venv), "--no-model"],
        env=environment(venv, 0), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "building llama.cpp's llama-server" in done.stderr
    assert f"local model server: llama.cpp's llama-server ({venv}/bin/llama-server)" in done.stderr
    assert "could not be built" not in done.stderr


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_stopping_the_installer_stops_the_build_and_its_children(tmp_path: Path, stop: int) -> None:
    script, venv = installer(tmp_path)
    running = subprocess.Popen(
        ["bash", str(script), "--venv", str(venv), "--no-model"],
        env=environment(venv, 300), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    pid_file = venv / "build.pid"
    deadline = time.monotonic() + 60
    while not pid_file.exists() or not pid_file.read_text().strip():
        assert time.monotonic() < deadline and running.poll() is None
        time.sleep(0.1)
    build = int(pid_file.read_text())
    group = os.getpgid(build)
    assert group != os.getpgid(running.pid)  # a group of its own: the terminal's Ctrl-C does not reach it
    time.sleep(1.0)  # the installer is past its own start, waiting on the build
    running.send_signal(stop)
    assert running.wait(timeout=30) != 0
    deadline = time.monotonic() + 10
    while True:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            break  # the build and its sleeping child are gone
        assert time.monotonic() < deadline, "the build outlived the installer"
        time.sleep(0.1)
    assert not (venv / "bin" / "llama-server").exists()
