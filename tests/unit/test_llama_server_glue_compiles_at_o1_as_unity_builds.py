"""scripts/llama-server-glue.cmake lowers the server's glue targets to -O1 and builds them as unity builds
(but for the sources that clash), and leaves the model's code at -O3 and built file by file, configured
through CMAKE_PROJECT_INCLUDE exactly as scripts/build-llama-server.sh does."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GLUE = REPO / "scripts" / "llama-server-glue.cmake"

pytestmark = pytest.mark.skipif(
    shutil.which("cmake") is None or shutil.which("ninja") is None or shutil.which("c++") is None,
    reason="needs cmake, ninja and a C++ compiler",
)

PROJECT = """cmake_minimum_required(VERSION 3.19)
project(llama.cpp CXX)
add_subdirectory(ggml)
add_library(llama STATIC llama.cpp)
add_library(llama-common STATIC common.cpp chat.cpp json.cpp)
add_library(cpp-httplib INTERFACE)
add_executable(llama-server server.cpp)
target_link_libraries(llama-server llama-common llama cpp-httplib)
"""


def flags(build_ninja: str, source: str) -> str:
    """The FLAGS line of the compile rule for `source`."""
    rule = re.search(rf"^build [^\n]*{re.escape(source)}\.o: .*?\n(.*?)\n\n", build_ninja, re.M | re.S)
    assert rule is not None, source
    line = re.search(r"^\s*FLAGS = (.*)$", rule.group(1), re.M)
    return line.group(1) if line else ""


def test_the_glue_gets_o1_after_o3_and_the_model_code_keeps_o3(tmp_path: Path) -> None:
    source = tmp_path / "src"
    (source / "ggml").mkdir(parents=True)
    (source / "CMakeLists.txt").write_text(PROJECT)
    # ggml is a project of its own in llama.cpp: the include runs again there and must not act twice
    (source / "ggml" / "CMakeLists.txt").write_text("project(ggml CXX)\nadd_library(ggml STATIC ggml.cpp)\n")
    for name in ("llama.cpp", "common.cpp", "chat.cpp", "json.cpp", "server.cpp", "ggml/ggml.cpp"):
        (source / name).write_text("int f() { return 0; }\n")
    build = tmp_path / "build"
    subprocess.run(
        ["cmake", "-S", str(source), "-B", str(build), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
         f"-DCMAKE_PROJECT_INCLUDE={GLUE}"],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    ninja = (build / "build.ninja").read_text()
    for glue in ("llama-common.dir/Unity/unity_0_cxx.cxx", "json.cpp", "server.cpp"):
        line = flags(ninja, glue)
        assert line.split().count("-O1") == 1 and line.index("-O3") < line.index("-O1"), line
    unity = (build / "CMakeFiles" / "llama-common.dir" / "Unity" / "unity_0_cxx.cxx").read_text()
    assert "common.cpp" in unity and "chat.cpp" in unity and "json.cpp" not in unity  # json.cpp alone
    for model_code in ("llama.cpp", "ggml.cpp"):
        assert "-O1" not in flags(ninja, model_code).split()
        assert f"/{model_code}.o:" in ninja  # compiled on its own, not in a unity file
