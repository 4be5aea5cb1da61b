#!/usr/bin/env bash
# Builds llama.cpp's own OpenAI-compatible server (`llama-server`) from the llama-cpp-python source
# distribution fixloop pins (it vendors llama.cpp), with the same portable CPU flags as
# scripts/install-local.sh, and installs it where fixloop looks for it: the venv's bin/llama-server.
# Only the server target is built, statically linked (no OpenMP, no curl/OpenSSL, no web UI download); its
# glue compiles at -O1 as unity builds, ggml and llama at -O3 (scripts/llama-server-glue.cmake).
#   usage: scripts/build-llama-server.sh [--venv DIR] [--dest FILE] [--jobs N]
# Takes about 6 minutes on 2 idle cores; needs a C++17 compiler; cmake and ninja come from PyPI when missing.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/.venv"; dest=""; jobs=""
while [ $# -gt 0 ]; do
  case "$1" in
    --venv) venv="$2"; shift 2 ;;
    --dest) dest="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
dest="${dest:-$venv/bin/llama-server}"
jobs="${jobs:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
py="$venv/bin/python"
version="0.3.36"  # the `local` extra's llama-cpp-python (pyproject.toml)

work="$(mktemp -d "${TMPDIR:-/tmp}/fixloop-llama-server.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# The sdist, whose build needs only wheels (with :all:, pip built every build dependency from source too:
# over 4 minutes with pip's cache off, against 10 s).
"$py" -m pip download -q --no-deps --no-binary llama-cpp-python "llama-cpp-python==$version" -d "$work"
tar -xzf "$work/llama_cpp_python-$version.tar.gz" -C "$work"
src="$work/llama_cpp_python-$version/vendor/llama.cpp"

if ! command -v cmake >/dev/null || ! command -v ninja >/dev/null; then
  # into the build's own folder, not the venv: scripts/install-local.sh runs pip there meanwhile
  "$py" -m pip install -q --target "$work/tools" cmake ninja
  export PATH="$work/tools/bin:$PATH" PYTHONPATH="$work/tools${PYTHONPATH:+:$PYTHONPATH}"
fi

# Portable CPU flags: no -march=native, no AVX-512 (the native build crashes on some CPUs).
cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
  -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF \
  -DGGML_OPENMP=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_APP=OFF \
  -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DCMAKE_PROJECT_INCLUDE="$root/scripts/llama-server-glue.cmake" \
  >"$work/configure.log" 2>&1 \
  || { tail -20 "$work/configure.log" >&2; exit 1; }
cmake --build "$work/build" --target llama-server -j "$jobs"
"$work/build/bin/llama-server" --version >/dev/null 2>&1 \
  || { echo "the built llama-server does not run here" >&2; exit 1; }
mkdir -p "$(dirname "$dest")"
install -m 755 "$work/build/bin/llama-server" "$dest.part"
mv -f "$dest.part" "$dest"
echo "built $dest" >&2
