#!/usr/bin/env bash
# Installs fixloop with the managed local model (`fixloop[local]`: llama-cpp-python's server) into a
# venv, building llama.cpp with portable AVX2 flags (the default native build crashes with an illegal
# instruction on some CPUs), then downloads and verifies the default model unless --no-model.
#   usage: scripts/install-local.sh [--venv DIR] [--rebuild] [--no-model] [--demo] [MODEL]
#   default venv: .venv in the repository root; MODEL: see `fixloop model list`;
#   --demo: then run `fixloop demo` (fixes the bundled demo project live, through the language server)
# First run: 10-20 minutes on 2 cores (the llama.cpp build) plus the model download; later: seconds.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
venv="$root/.venv"; rebuild=0; fetch_model=1; model=""; demo=0
while [ $# -gt 0 ]; do
  case "$1" in
    --venv) venv="$2"; shift 2 ;;
    --rebuild) rebuild=1; shift ;;
    --no-model) fetch_model=0; shift ;;
    --demo) demo=1; shift ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    -*) echo "unknown option $1 (see --help)" >&2; exit 2 ;;
    *) model="$1"; shift ;;
  esac
done

[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
py="$venv/bin/python"

# Portable CPU flags: no -march=native, no AVX-512 (see ../shared/local-model/README.md).
export CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF"
export FORCE_CMAKE=1
extra=()
if [ "$rebuild" = 1 ]; then
  # pip's wheel cache is keyed by the source, not by CMAKE_ARGS: a rebuild must bypass it.
  extra=(--no-cache-dir --force-reinstall --no-deps)
  "$py" -m pip install -q "${extra[@]}" "llama-cpp-python==0.3.36"
fi
if ! "$py" -c 'import fixloop' 2>/dev/null || ! "$py" -c 'import llama_cpp.server' 2>/dev/null; then
  echo "installing fixloop[local] into $venv (builds llama.cpp on first install; takes a while)..." >&2
  "$py" -m pip install -q -e "$root[local]"
fi

if [ "$fetch_model" = 1 ]; then
  "$venv/bin/fixloop" model pull ${model:+"$model"} >/dev/null
fi
echo "ready: $venv/bin/fixloop fix TEST_ID --model local" >&2
if [ "$demo" = 1 ]; then
  exec "$venv/bin/fixloop" demo --model "local${model:+:$model}"
fi
