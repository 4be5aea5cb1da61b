"""The wheel `python -m build` makes is the product: installed into a fresh venv (no checkout on its path, run
from a folder outside it) it carries its LICENSE, metadata and the projects it ships, and runs `fixloop demo`
and `fixloop bench` on a packaged case against the scripted model.

One build and one venv for the module (pip's own cache keeps the install quick), kept between runs while no
file the build could read changes (tests/built_once.py); each command runs once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from built_once import build_key, built_once
from fixloop import __version__
from scripted_model import ScriptedModelServer
from support import REPO_ROOT, fix_script

pytestmark = pytest.mark.timeout(900)


@dataclass(frozen=True)
class Installed:
    wheel: Path
    venv: Path
    work: Path  # a folder outside the checkout, the commands' working folder
    env: dict[str, str]
    seconds: float  # build + venv + install, for the report at the end

    @property
    def fixloop(self) -> str:
        return str(self.venv / "bin" / "fixloop")

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [self.fixloop, *args],
            cwd=self.work,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )


def _step(command: list[str], env: dict[str, str], cwd: Path) -> None:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{' '.join(command)}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    started = time.monotonic()
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("FIXLOOP_", "OPENAI_", "PYTHON", "VIRTUAL_ENV", "PIP_"))
    }
    # pip's cache stays the user's own (the tests point XDG_CACHE_HOME elsewhere)
    env["PIP_CACHE_DIR"] = os.environ.get("PIP_CACHE_DIR") or str(Path.home() / ".cache" / "pip")
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"

    def build(base: Path) -> None:
        _step([sys.executable, "-m", "build", "--outdir", str(base / "dist"), str(REPO_ROOT)], env, base)
        (wheel,) = (base / "dist").glob("fixloop-*.whl")
        _step([sys.executable, "-m", "venv", str(base / "venv")], env, base)
        _step([str(base / "venv" / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)], env, base)

    base = built_once(tmp_path_factory, "wheel-install", build, key=_sources_key())
    (wheel,) = (base / "dist").glob("fixloop-*.whl")
    work = tmp_path_factory.mktemp("elsewhere")
    env.update(
        PATH=f"{base / 'venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}",
        XDG_CACHE_HOME=str(work / "cache"),
        FIXLOOP_API_KEY="none",
        PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
    )
    return Installed(wheel, base / "venv", work, env, time.monotonic() - started)


def _sources_key() -> str:
    """A key over every file of the checkout the build could read (tracked or not, not ignored, tests aside);
    "" (built every run) where git cannot list them."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO_ROOT,
        capture_output=True,
        check=False,
    )
    if listed.returncode != 0:
        return ""
    names = sorted({n for n in listed.stdout.decode().split("\0") if n and not n.startswith("tests/")})
    files = [REPO_ROOT / name for name in names if (REPO_ROOT / name).is_file()]
    return build_key(*files, extra=[str(p.relative_to(REPO_ROOT)) for p in files])


def test_the_wheel_carries_license_metadata_and_the_shipped_projects(installed: Installed):
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = set(wheel.namelist())
        info = next(name.split("/")[0] for name in names if name.endswith(".dist-info/METADATA"))
        metadata = wheel.read(f"{info}/METADATA").decode()
    assert f"{info}/licenses/LICENSE" in names
    for field in (
        "License-Expression: MIT",
        "Author: the fixloop authors",
        f"Version: {__version__}",
        "Classifier: Programming Language :: Python :: 3.11",
        "Classifier: Programming Language :: Python :: 3.14",
        "Classifier: Operating System :: Microsoft :: Windows",
        "Keywords: ",
        "Requires-Python: >=3.11",
    ):
        assert field in metadata, field
    for shipped in (
        "projects/demo/mathutils.py",
        "fixes/demo.json",
        "bench/projects/memo_ttl/case.json",
        "bench/fixes/memo_ttl.json",
        "bench/subsets/small-model.txt",
    ):
        shipped = f"fixloop/fixtures/{shipped}"
        assert shipped in names, shipped
    hidden = [name for name in names if name.startswith("fixloop/fixtures/bench/hidden/")]
    assert any("/test_hidden_" in name for name in hidden), "the own projects' hidden checks ship too"
    assert "Project-URL" not in metadata  # no placeholder; there is no public repository to name yet
    assert not any(name.startswith(("tests/", "scripted_model/")) or "__pycache__" in name for name in names)
    from fixloop.model.llama_cpp_python import LLAMA_REQUIREMENT

    assert f'Requires-Dist: {LLAMA_REQUIREMENT}; extra == "local"' in metadata


def test_the_installed_fixloop_is_the_wheel_not_the_checkout(installed: Installed):
    where = "import fixloop, fixloop.bundled as b; print(fixloop.__file__); print(b.fixtures_root())"
    done = subprocess.run(
        [str(installed.venv / "bin" / "python"), "-c", where],
        cwd=installed.work,
        env=installed.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    module, fixtures = done.stdout.split()
    assert module.startswith(str(installed.venv)) and fixtures.startswith(str(installed.venv)), done.stdout
    assert installed.run("--version").stdout.strip() == f"fixloop {__version__}"
    print(f"\nwheel build + fresh venv + install (or those kept): {installed.seconds:.1f} s")


def test_doctor_runs_from_the_wheel_as_pipx_and_uvx_would_run_it(installed: Installed):
    """`pipx run fixloop doctor` / `uvx fixloop doctor`: the console script of a fresh install, in a folder
    outside the checkout; every line a check (✓, ✗ with the fix, –), never a traceback."""
    project = installed.work / "project"
    project.mkdir(exist_ok=True)
    env = {key: value for key, value in installed.env.items() if key != "FIXLOOP_API_KEY"}
    done = subprocess.run(
        [installed.fixloop, "doctor", "--root", str(project)],
        cwd=installed.work, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines and all(line[:1] in "✓✗–" for line in lines), lines
    assert any(line.startswith("✓ python:") for line in lines), lines
    assert any(line.startswith(("✓ protections:", "– protections:")) for line in lines), lines


def test_demo_fixes_the_packaged_project_with_the_scripted_model(installed: Installed):
    with ScriptedModelServer(fix_script("demo")) as model:
        done = installed.run("demo", "--model", "scripted", "--base-url", model.base_url)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "fixloop/fixtures/projects/demo" in done.stdout  # the copy's source: the installed package
    assert "its tests now: 3 passed" in done.stdout


def test_bench_runs_a_packaged_case_with_the_scripted_model(installed: Installed):
    results = installed.work / "results.jsonl"
    with ScriptedModelServer(fix_script("demo")) as model:
        done = installed.run(
            "bench",
            "--case",
            "demo",
            "--model",
            "scripted",
            "--base-url",
            model.base_url,
            "--results",
            str(results),
        )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the cases that ship with fixloop" in done.stdout
    (record,) = map(json.loads, results.read_text().splitlines())
    assert record["case"] == "demo" and record["status"] == "fixed_unchecked", record  # no hidden checks
