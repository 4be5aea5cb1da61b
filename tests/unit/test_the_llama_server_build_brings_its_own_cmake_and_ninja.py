"""scripts/build-llama-server.sh on a machine without cmake or ninja: it installs both from PyPI into its own
build folder (not into the venv, where the installer's pip runs meanwhile), builds with them there and
installs the server. pip, cmake and ninja are fakes that log their calls; the PATH holds only the plain
tools the script needs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the build script is a bash script")

TOOLS = ("bash", "cat", "chmod", "dirname", "getconf", "gzip", "install", "mkdir", "mktemp", "mv", "rm")
TOOLS += ("sed", "tail", "tar")

FAKE_TOOL = """#!/bin/bash
echo "${0##*/} from ${0%/*} PYTHONPATH=$PYTHONPATH: $*" >> "$FAKE_LOG"
if [ "$1" = --build ]; then  # cmake --build DIR --target llama-server -j N
  mkdir -p "$2/bin"
  printf '#!/bin/sh\\nexit 0\\n' > "$2/bin/llama-server"
  chmod +x "$2/bin/llama-server"
fi
"""

FAKE_PYTHON = f"""#!/bin/bash
# the venv's python: `-m pip download ... -d DIR` writes the sdist, `-m pip install --target DIR` the tools
echo "python: $*" >> "$FAKE_LOG"
last="${{@: -1}}"
if [ "$3" = download ]; then
  sdist="$FAKE_SDIST/llama_cpp_python-0.3.36"
  mkdir -p "$sdist/vendor/llama.cpp"
  tar -czf "$last/llama_cpp_python-0.3.36.tar.gz" -C "$FAKE_SDIST" llama_cpp_python-0.3.36
elif [ "$3" = install ]; then
  while [ "$1" != --target ]; do shift; done
  mkdir -p "$2/bin"
  for tool in cmake ninja; do
    cat > "$2/bin/$tool" <<'TOOL'
{FAKE_TOOL}TOOL
    chmod +x "$2/bin/$tool"
  done
fi
"""


def plain_path(tmp_path: Path) -> Path:
    """A folder holding links to the plain tools only: no cmake, no ninja."""
    folder = tmp_path / "path"
    folder.mkdir()
    for tool in TOOLS:
        found = shutil.which(tool)
        if found is None:
            pytest.skip(f"{tool} is not installed")
        (folder / tool).symlink_to(found)
    return folder


def test_missing_cmake_and_ninja_come_from_pypi_into_the_build_folder(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    log, sdist, scratch = tmp_path / "calls.log", tmp_path / "sdist", tmp_path / "tmp"
    sdist.mkdir()
    scratch.mkdir()
    env = {
        "PATH": str(plain_path(tmp_path)),
        "HOME": str(tmp_path),
        "TMPDIR": str(scratch),
        "FAKE_LOG": str(log),
        "FAKE_SDIST": str(sdist),
    }
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "build-llama-server.sh"), "--venv", str(venv), "--jobs", "1"],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + log.read_text()
    assert (venv / "bin" / "llama-server").is_file() and os.access(venv / "bin" / "llama-server", os.X_OK)
    calls = log.read_text().splitlines()
    installs = [call for call in calls if call.startswith("python: -m pip install")]
    assert len(installs) == 1, calls  # one install, and only into the build's folder
    target = installs[0].split("--target ")[1].split()[0]
    assert target.startswith(str(scratch)) and installs[0].endswith("cmake ninja")
    tools = [call for call in calls if call.startswith("cmake from")]
    assert len(tools) == 2, calls  # configure, then build
    assert all(call.startswith(f"cmake from {target}/bin PYTHONPATH={target}") for call in tools)
    assert "--target llama-server" in tools[1]
    assert not list(scratch.iterdir())  # the build folder is gone
