#!/usr/bin/env bash
# Installs fixloop with the managed local model into a venv: llama.cpp's own server (`llama-server`,
# built by scripts/build-llama-server.sh into the venv's bin/), or, where that build fails,
# `fixloop[local]` (llama-cpp-python's server); both with portable AVX2 flags (the default native build
# crashes with an illegal instruction on some CPUs). Then downloads and verifies the default model
# unless --no-model, and says which server runs.
#   usage: scripts/install-local.sh [--venv DIR] [--rebuild] [--no-model] [--demo] [MODEL]
#   default venv: .venv in the repository root; MODEL: see `fixloop model list`;
#   --demo: then run `fixloop demo` (fixes the bundled demo project live, through the language server)
# First run: about 7 minutes on 2 cores (the llama.cpp build; pip and the model download meanwhile); later: seconds.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/.venv"; rebuild=0; fetch_model=1; model=""; demo=0
while [ $# -gt 0 ]; do
  case "$1" in
    --venv) venv="$2"; shift 2 ;;
    --rebuild) rebuild=1; shift ;;
    --no-model) fetch_model=0; shift ;;
    --demo) demo=1; shift ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    -*) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
    *) model="$1"; shift ;;
  esac
done

[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
py="$venv/bin/python"

server="$venv/bin/llama-server"
log="$venv/llama-server-build.log"
build_pid=""
if [ "$rebuild" = 1 ] || [ ! -x "$server" ]; then
  # It compiles while pip installs fixloop and the model downloads: the CPU is busy from the start.
  echo "building llama.cpp's llama-server into $venv (takes a while on first install)..." >&2
  set -m  # a process group of its own, so that stopping the build stops its compilers too
  bash "$root/scripts/build-llama-server.sh" --venv "$venv" >"$log" 2>&1 &
  build_pid=$!
  set +m
fi
pull_pid=""
stop_background() {  # background jobs ignore Ctrl-C: stop them on the way out
  if [ -n "$build_pid" ]; then kill -- "-$build_pid" 2>/dev/null || true; fi
  if [ -n "$pull_pid" ]; then kill "$pull_pid" 2>/dev/null || true; fi
}
trap stop_background EXIT
if ! "$py" -c 'import fixloop' 2>/dev/null; then
  "$py" -m pip install -q -e "$root"
fi
if [ "$fetch_model" = 1 ]; then
  # The model downloads while llama.cpp builds: the one waits on the network, the other on the CPU.
  "$venv/bin/fixloop" model pull ${model:+"$model"} >"$venv/model-pull.log" 2>&1 &
  pull_pid=$!
fi
if [ -n "$build_pid" ] && ! wait "$build_pid"; then
  echo "llama-server could not be built (log: $log): using llama-cpp-python's server instead" >&2
fi
build_pid=""

if [ ! -x "$server" ]; then
  # Portable CPU flags: no -march=native, no AVX-512 (see ../shared/local-model/README.md).
  export CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF"
  export FORCE_CMAKE=1
  if [ "$rebuild" = 1 ]; then
    # pip's wheel cache is keyed by the source, not by CMAKE_ARGS: a rebuild must bypass it.
    "$py" -m pip install -q --no-cache-dir --force-reinstall --no-deps "llama-cpp-python==0.3.36"
  fi
  if ! "$py" -c 'import llama_cpp.server' 2>/dev/null; then
    echo "installing fixloop[local] into $venv (builds llama.cpp on first install; takes a while)..." >&2
    "$py" -m pip install -q -e "$root[local]"
  fi
fi
"$py" -c 'from fixloop.model.local import serving_line; print("local model server:", serving_line())' >&2

if [ -n "$pull_pid" ]; then
  if ! wait "$pull_pid"; then tail -n 3 "$venv/model-pull.log" >&2; exit 1; fi
  grep -a "^verified" "$venv/model-pull.log" >&2 || true
fi
trap - EXIT
echo "ready: $venv/bin/fixloop fix TEST_ID --model local" >&2
if [ "$demo" = 1 ]; then
  exec "$venv/bin/fixloop" demo --model "local${model:+:$model}"
fi
