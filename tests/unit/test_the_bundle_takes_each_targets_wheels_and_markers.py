"""client-vscode/scripts/bundle_python.py asks pip for the target's wheels (platform tags, CPython version
and ABI), and adds what only the target needs: pip judges environment markers by this machine, so a
`sys_platform == "win32"` requirement (pytest's colorama) is found from the target's markers."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from support import REPO_ROOT


@pytest.fixture(scope="module")
def bundle_python() -> ModuleType:
    script = REPO_ROOT / "client-vscode" / "scripts" / "bundle_python.py"
    spec = importlib.util.spec_from_file_location("bundle_python", script)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def dist_info(folder: Path, name: str, requires: list[str]):
    info = folder / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    lines = [f"Name: {name}", "Version: 1.0", *(f"Requires-Dist: {r}" for r in requires)]
    (info / "METADATA").write_text("\n".join(["Metadata-Version: 2.1", *lines]) + "\n")
    (info / "RECORD").write_text(f"{name}/__init__.py,,\n")
    (info / "WHEEL").write_text("Wheel-Version: 1.0\nTag: py3-none-any\n")
    return info


def test_each_target_gets_its_own_platform_tags_and_the_cpython_abi(bundle_python):
    args = bundle_python.wheel_args("darwin-arm64", "3.13")
    assert args[:7] == [
        "--only-binary=:all:",
        "--python-version",
        "3.13",
        "--implementation",
        "cp",
        "--abi",
        "cp313",
    ]
    assert args[7:] == ["--platform", "macosx_11_0_arm64"]
    assert bundle_python.wheel_args("win32-x64", "3.11")[7:] == ["--platform", "win_amd64"]
    linux = bundle_python.wheel_args("linux-arm64", "3.12")
    assert "manylinux_2_17_aarch64" in linux and not [a for a in linux if "x86_64" in a or "musl" in a]
    assert set(bundle_python.TARGETS) == {
        "linux-x64", "linux-arm64", "alpine-x64", "darwin-x64", "darwin-arm64", "win32-x64", "universal",
    }  # fmt: skip


def test_a_requirement_only_the_target_has_is_added(bundle_python, tmp_path: Path):
    pytest_info = dist_info(tmp_path, "pytest", ['colorama>=0.4; sys_platform == "win32"', "pluggy>=1.5"])
    other = dist_info(tmp_path, "pluggy", ['tomli; python_version < "3.11"', 'pytest; extra == "dev"'])
    dists = [bundle_python.Dist(pytest_info), bundle_python.Dist(other)]
    assert bundle_python.target_only_requirements(dists, "win32-x64", "3.11") == ["colorama>=0.4"]
    for target in ("linux-x64", "alpine-x64", "darwin-arm64"):
        assert bundle_python.target_only_requirements(dists, target, "3.11") == []
