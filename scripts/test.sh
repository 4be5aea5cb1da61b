#!/usr/bin/env bash
# Runs fixloop's whole test suite on a fresh machine: makes .venv, installs fixloop with its test
# tools, sets up the real editors for the e2e tests (apt, Node 24, code-server; cached, idempotent),
# then runs pytest. Extra arguments go to pytest (e.g. `-m "not e2e"` to skip the editors).
#   usage: scripts/test.sh [PYTEST_ARGS...]
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e '.[dev]'
skip_e2e=0
for arg in "$@"; do case "$arg" in *"not e2e"*) skip_e2e=1 ;; esac; done
if [ "$skip_e2e" = 0 ] && [ "${FIXLOOP_SKIP_E2E_SETUP:-0}" != 1 ] && [ -f scripts/setup-e2e.sh ]; then
  bash scripts/setup-e2e.sh
  export FIXLOOP_E2E_REQUIRED="${FIXLOOP_E2E_REQUIRED:-${CI:+1}}"
fi
set +e
.venv/bin/python -m pytest "$@"
code=$?
set -e
[ "$code" = 5 ] && { echo "no tests collected" >&2; exit 1; }
exit "$code"
